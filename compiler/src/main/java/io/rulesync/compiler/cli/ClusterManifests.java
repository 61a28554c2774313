package io.rulesync.compiler.cli;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.Problem;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A cluster described by manifest files: reads and decodes every object, and refuses the whole input
 * when anything is wrong (an unparsable file, an invalid field, the same object defined twice), so
 * that rules are never compiled from a partial picture.
 */
public final class ClusterManifests {
    private ClusterManifests() {
    }

    public static ClusterState load(List<Path> paths) throws ManifestException {
        return fromDocuments(ManifestReader.read(paths));
    }

    /** {@link #load(List)} with another limit on the size of a file (bytes). */
    public static ClusterState load(List<Path> paths, long maxFileBytes) throws ManifestException {
        return fromDocuments(ManifestReader.read(paths, maxFileBytes));
    }

    public static ClusterState fromDocuments(List<ManifestDocument> docs) throws ManifestException {
        List<Problem> problems = new ArrayList<>();
        Map<String, String> seen = new HashMap<>();
        List<Service> services = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        for (ManifestDocument doc : docs) {
            Decoded d = ManifestDecoder.decode(doc);
            if (d instanceof Decoded.Rejected r) {
                problems.addAll(r.problems());
            } else if (d instanceof Decoded.Accepted a) {
                ClusterObject o = a.object();
                String id = o.kind() + " " + o.key();
                String first = seen.putIfAbsent(id, a.source());
                if (first != null) {
                    problems.add(new Problem(a.source(), id, "", "is defined twice (first in " + first + ")"));
                    continue;
                }
                if (o instanceof Service s) {
                    services.add(s);
                } else if (o instanceof EndpointSlice s) {
                    slices.add(s);
                } else if (o instanceof Node n) {
                    nodes.add(n);
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return ClusterState.of(services, slices, nodes);
    }
}
