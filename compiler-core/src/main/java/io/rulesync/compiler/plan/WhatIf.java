package io.rulesync.compiler.plan;

import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDiff;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What a cluster's rules would become if some objects were applied to it, or removed from it: the objects are folded
 * into the cluster's head as the watcher's events would be, admitted and compiled as the compiler would, and nothing is
 * stored. The comparison is with what the head compiles now ({@link ClusterHead#compiledAsPublished()}), so the answer
 * is the effect of these objects alone.
 */
public final class WhatIf {
    private WhatIf() {}

    /** Whether the objects are applied (created or changed) or removed. */
    public enum Action {
        APPLY,
        DELETE
    }

    /** What one object would do to the cluster's state. */
    public enum Change {
        /** Applied, and the cluster has no such object. */
        CREATED,
        /** Applied over an object that differs. */
        CHANGED,
        /** Applied, equal to the object the cluster holds. */
        UNCHANGED,
        /** Removed from the cluster. */
        DELETED,
        /** Removed, but the cluster has no such object. */
        ABSENT
    }

    /** One object of the what-if, named as in problems ({@code Service shop/web}), and what it would do. */
    public record ObjectChange(String object, Change change) {}

    /**
     * The answer.
     *
     * @param before the rules the cluster compiles now
     * @param after the rules it would compile with the objects
     * @param diff what differs between the two
     * @param refused what admission would refuse with the objects that it does not refuse now (a Service left out for a
     *     ClusterIP or NodePort another holds, a load-balancer IP in a special range); it may name a Service the objects
     *     displace, not only theirs
     * @param admitted what admission refuses now and would not any more
     */
    public record Outcome(
            ClusterRules before,
            ClusterRules after,
            RulesDiff diff,
            List<ObjectChange> objects,
            List<Problem> refused,
            List<Problem> admitted) {
        public Outcome {
            objects = List.copyOf(objects);
            refused = List.copyOf(refused);
            admitted = List.copyOf(admitted);
        }
    }

    /** The outcome of {@code action} on {@code objects} (in that order; a later object of the same name wins) at {@code at}. */
    public static Outcome of(ClusterHead head, List<ClusterObject> objects, Action action, Instant at) {
        ClusterHead base = head.compiledAsPublished();
        ClusterState state = base.view().state();
        List<ClusterEvent> events = new ArrayList<>(objects.size());
        List<ObjectChange> changes = new ArrayList<>(objects.size());
        for (ClusterObject o : objects) {
            ObjectRef ref = ObjectRef.of(o);
            Optional<? extends ClusterObject> current = current(state, o);
            String name = o.kind() + " " + o.key();
            if (action == Action.APPLY) {
                events.add(new ObjectUpserted(head.cluster(), o, "", at));
                changes.add(new ObjectChange(
                        name,
                        current.isEmpty()
                                ? Change.CREATED
                                : current.get().equals(o) ? Change.UNCHANGED : Change.CHANGED));
            } else {
                events.add(new ObjectDeleted(head.cluster(), ref, "", at));
                changes.add(new ObjectChange(name, current.isEmpty() ? Change.ABSENT : Change.DELETED));
            }
            state = action == Action.APPLY
                    ? with(state, o)
                    : state; // a later object of the same name compares with this one
        }
        ClusterHead.Step step = base.apply(events);
        List<Problem> now = base.admissionProblems();
        List<Problem> then = step.next().admissionProblems();
        return new Outcome(
                base.published(), step.next().published(), step.diff(), changes, minus(then, now), minus(now, then));
    }

    private static Optional<? extends ClusterObject> current(ClusterState s, ClusterObject o) {
        if (o instanceof Service svc) {
            return s.service(svc.name());
        }
        if (o instanceof EndpointSlice slice) {
            return s.endpointSlice(slice.name());
        }
        return s.node(((Node) o).name());
    }

    private static ClusterState with(ClusterState s, ClusterObject o) {
        if (o instanceof Service svc) {
            return s.withService(svc);
        }
        if (o instanceof EndpointSlice slice) {
            return s.withEndpointSlice(slice);
        }
        return s.withNode((Node) o);
    }

    private static List<Problem> minus(List<Problem> a, List<Problem> b) {
        Set<Problem> out = new LinkedHashSet<>(a);
        b.forEach(out::remove);
        return List.copyOf(out);
    }
}
