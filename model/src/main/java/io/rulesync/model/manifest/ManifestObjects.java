package io.rulesync.model.manifest;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The objects of a set of manifests, decoded one document at a time as a reader hands them over: what is kept is typed
 * objects, in the order they came, and everything wrong with the input (an invalid field, the same object defined
 * twice). Kinds that rules do not read are skipped. Whoever compiles from manifests (the compile command, a plan) takes
 * the objects only when there is no problem: rules are never made from a partial picture.
 */
public final class ManifestObjects implements Consumer<ManifestDocument> {
    private final List<Problem> problems = new ArrayList<>();
    private final Map<String, String> seen = new HashMap<>();
    private final List<ClusterObject> objects = new ArrayList<>();

    @Override
    public void accept(ManifestDocument doc) {
        Decoded d = ManifestDecoder.decode(doc);
        if (d instanceof Decoded.Rejected r) {
            problems.addAll(r.problems());
        } else if (d instanceof Decoded.Accepted a) {
            ClusterObject o = a.object();
            String id = o.kind() + " " + o.key();
            String first = seen.putIfAbsent(id, a.source());
            if (first != null) {
                problems.add(new Problem(a.source(), id, "", "is defined twice (first in " + first + ")"));
            } else {
                objects.add(o);
            }
        }
    }

    /** What is wrong with the documents taken so far; empty when nothing is. */
    public List<Problem> problems() {
        return List.copyOf(problems);
    }

    /** The objects, in the order they came, or the problems when there are any. */
    public List<ClusterObject> objects() throws ManifestException {
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return List.copyOf(objects);
    }

    /** The objects as a cluster's state, or the problems when there are any. */
    public ClusterState state() throws ManifestException {
        List<Service> services = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        for (ClusterObject o : objects()) {
            if (o instanceof Service s) {
                services.add(s);
            } else if (o instanceof EndpointSlice s) {
                slices.add(s);
            } else if (o instanceof Node n) {
                nodes.add(n);
            }
        }
        return ClusterState.of(services, slices, nodes);
    }
}
