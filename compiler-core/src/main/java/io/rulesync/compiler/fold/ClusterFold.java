package io.rulesync.compiler.fold;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Folds events into a cluster's view: a pure function, so the view is exactly what the event log
 * says, and replaying the log rebuilds it. Events are level-based (each carries a whole object), so
 * an event that repeats the current state changes nothing, and duplicates are harmless.
 */
public final class ClusterFold {
    private ClusterFold() {}

    /** The new view and what changed. */
    public record Folded(ClusterView view, Changes changes) {}

    public static Folded applyAll(ClusterView view, List<ClusterEvent> events) {
        // Accumulated in mutable locals: merging immutable Changes per event would be quadratic in the batch.
        Set<NamespacedName> services = new TreeSet<>();
        boolean nodes = false;
        boolean settings = false;
        for (ClusterEvent e : events) {
            Folded f = apply(view, e);
            view = f.view();
            services.addAll(f.changes().services());
            nodes |= f.changes().nodes();
            settings |= f.changes().settings();
        }
        return new Folded(view, new Changes(services, nodes, settings));
    }

    public static Folded apply(ClusterView view, ClusterEvent event) {
        ClusterState s = view.state();
        if (event instanceof ObjectUpserted u) {
            return upsert(view, u.object());
        }
        if (event instanceof ObjectDeleted d) {
            return delete(view, d.ref());
        }
        if (event instanceof SyncMarker m) {
            Folded f = new Folded(view, Changes.NONE);
            for (ObjectRef gone : absent(s, m)) {
                Folded g = delete(f.view(), gone);
                f = new Folded(g.view(), f.changes().plus(g.changes()));
            }
            return f;
        }
        if (event instanceof ClusterEvent.OperatorAction || ProblemReports.leavesRulesAlone(event)) {
            // Pinning decides what is published, not what the cluster is, a digest only checks what was
            // folded, and refused objects are not in the view: ClusterHead handles all three.
            return new Folded(view, Changes.NONE);
        }
        SettingsChanged c = (SettingsChanged) event;
        if (c.settings().equals(view.settings())) {
            return new Folded(view, Changes.NONE);
        }
        return new Folded(new ClusterView(s, c.settings()), new Changes(Set.of(), false, true));
    }

    private static Folded upsert(ClusterView view, ClusterObject o) {
        ClusterState s = view.state();
        if (o instanceof Service svc) {
            if (s.service(svc.name()).filter(svc::equals).isPresent()) {
                return new Folded(view, Changes.NONE);
            }
            return changed(view, s.withService(svc), Set.of(svc.name()), false);
        }
        if (o instanceof EndpointSlice slice) {
            EndpointSlice old = s.endpointSlice(slice.name()).orElse(null);
            if (slice.equals(old)) {
                return new Folded(view, Changes.NONE);
            }
            Set<NamespacedName> touched = new TreeSet<>();
            touched.add(slice.service());
            if (old != null) {
                touched.add(old.service()); // the slice may have moved to another Service
            }
            return changed(view, s.withEndpointSlice(slice), touched, false);
        }
        Node node = (Node) o;
        Node old = s.node(node.name()).orElse(null);
        if (node.equals(old)) {
            return new Folded(view, Changes.NONE);
        }
        // Labels other than the zone only steer staged rollout: the view keeps them, nothing is compiled again.
        return changed(view, s.withNode(node), Set.of(), !node.sameForRules(old));
    }

    private static Folded delete(ClusterView view, ObjectRef ref) {
        ClusterState s = view.state();
        return switch (ref.kind()) {
            case SERVICE ->
                s.service(ref.name()).isEmpty()
                        ? new Folded(view, Changes.NONE)
                        : changed(view, s.withoutService(ref.name()), Set.of(ref.name()), false);
            case ENDPOINT_SLICE ->
                s.endpointSlice(ref.name())
                        .map(old -> changed(view, s.withoutEndpointSlice(ref.name()), Set.of(old.service()), false))
                        .orElse(new Folded(view, Changes.NONE));
            case NODE ->
                s.node(ref.key()).isEmpty()
                        ? new Folded(view, Changes.NONE)
                        : changed(view, s.withoutNode(ref.key()), Set.of(), true);
        };
    }

    /** Objects of the marker's kind that the state holds but the marker does not list. */
    private static List<ObjectRef> absent(ClusterState s, SyncMarker m) {
        List<ObjectRef> out = new ArrayList<>();
        if (m.kind() == ObjectKind.SERVICE) {
            s.services().forEach(o -> addIfAbsent(out, m, ObjectRef.of(o)));
        } else if (m.kind() == ObjectKind.ENDPOINT_SLICE) {
            s.endpointSlices().forEach(o -> addIfAbsent(out, m, ObjectRef.of(o)));
        } else {
            s.nodes().forEach(o -> addIfAbsent(out, m, ObjectRef.of(o)));
        }
        return out;
    }

    private static void addIfAbsent(List<ObjectRef> out, SyncMarker m, ObjectRef ref) {
        if (!m.keys().contains(ref.key())) {
            out.add(ref);
        }
    }

    private static Folded changed(ClusterView view, ClusterState s, Set<NamespacedName> services, boolean nodes) {
        return new Folded(new ClusterView(s, view.settings()), new Changes(services, nodes, false));
    }
}
