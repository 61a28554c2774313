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
        return load(paths, ManifestReader.DEFAULT_MAX_FILE_BYTES);
    }

    /**
     * {@link #load(List)} with another limit on the size of a file (bytes). Each object is decoded as it is read, so
     * what the files hold is kept only as typed objects.
     */
    public static ClusterState load(List<Path> paths, long maxFileBytes) throws ManifestException {
        Objects objects = new Objects();
        try {
            ManifestReader.readEach(paths, maxFileBytes, objects::add);
        } catch (ManifestException e) {
            List<Problem> all = new ArrayList<>(e.problems());
            all.addAll(objects.problems);
            throw new ManifestException(all);
        }
        return objects.state();
    }

    public static ClusterState fromDocuments(List<ManifestDocument> docs) throws ManifestException {
        Objects objects = new Objects();
        docs.forEach(objects::add);
        return objects.state();
    }

    /** Objects decoded one by one, and what is wrong with them. */
    private static final class Objects {
        private final List<Problem> problems = new ArrayList<>();
        private final Map<String, String> seen = new HashMap<>();
        private final List<Service> services = new ArrayList<>();
        private final List<EndpointSlice> slices = new ArrayList<>();
        private final List<Node> nodes = new ArrayList<>();

        void add(ManifestDocument doc) {
            Decoded d = ManifestDecoder.decode(doc);
            if (d instanceof Decoded.Rejected r) {
                problems.addAll(r.problems());
            } else if (d instanceof Decoded.Accepted a) {
                ClusterObject o = a.object();
                String id = o.kind() + " " + o.key();
                String first = seen.putIfAbsent(id, a.source());
                if (first != null) {
                    problems.add(new Problem(a.source(), id, "", "is defined twice (first in " + first + ")"));
                } else if (o instanceof Service s) {
                    services.add(s);
                } else if (o instanceof EndpointSlice s) {
                    slices.add(s);
                } else if (o instanceof Node n) {
                    nodes.add(n);
                }
            }
        }

        ClusterState state() throws ManifestException {
            if (!problems.isEmpty()) {
                throw new ManifestException(problems);
            }
            return ClusterState.of(services, slices, nodes);
        }
    }
}
