package io.rulesync.watcher.testing;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ObjectKind;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** Short descriptions of events ("upsert Service shop/web"), for readable assertions. */
public final class Events {
    private Events() {}

    public static String describe(ClusterEvent e) {
        if (e instanceof ObjectUpserted u) {
            return "upsert " + u.ref();
        }
        if (e instanceof ObjectDeleted d) {
            return "delete " + d.ref();
        }
        if (e instanceof SyncMarker s) {
            return "sync " + s.kind().apiName() + " " + s.sortedKeys();
        }
        if (e instanceof StateDigest d) {
            return "digest "
                    + new java.util.TreeMap<>(d.objects())
                            .entrySet().stream()
                                    .map(k -> k.getKey().apiName() + "="
                                            + k.getValue().count())
                                    .toList()
                    + (d.problems() == null ? "" : " problems=" + d.problems().count());
        }
        if (e instanceof ClusterEvent.ProblemsReported r) {
            // "-": a problem that names no object (a file that cannot be parsed)
            return "problems " + r.source() + " "
                    + r.problems().stream()
                            .map(p -> (p.object().isEmpty() ? "-" : p.object())
                                    + (p.field().isEmpty() ? "" : " " + p.field()))
                            .toList();
        }
        if (e instanceof ClusterEvent.ProblemSync s) {
            return "problem-sync " + s.sortedSources();
        }
        if (e instanceof ClusterEvent.ListingStarted) {
            return "listing";
        }
        return "settings " + ((SettingsChanged) e).settings().families();
    }

    public static String describe(List<ClusterEvent> events) {
        return events.stream().map(e -> e.cluster() + ": " + describe(e)).collect(Collectors.joining("\n"));
    }

    public static List<String> described(List<ClusterEvent> events) {
        return events.stream().map(Events::describe).toList();
    }

    /** Descriptions of the problem reports and problem syncs. */
    public static List<String> problems(List<ClusterEvent> events) {
        return events.stream()
                .filter(e -> e instanceof ClusterEvent.ProblemsReported || e instanceof ClusterEvent.ProblemSync)
                .map(Events::describe)
                .toList();
    }

    /** The events without the problem reports and syncs. */
    public static List<ClusterEvent> withoutProblems(List<ClusterEvent> events) {
        return events.stream()
                .filter(e -> !(e instanceof ClusterEvent.ProblemsReported || e instanceof ClusterEvent.ProblemSync))
                .toList();
    }

    /** Descriptions of the events about objects of {@code kind} (upserts and deletes) and its markers. */
    public static List<String> about(List<ClusterEvent> events, ObjectKind kind) {
        return events.stream()
                .filter(e -> (e instanceof ObjectUpserted u && u.ref().kind() == kind)
                        || (e instanceof ObjectDeleted d && d.ref().kind() == kind)
                        || (e instanceof SyncMarker s && s.kind() == kind))
                .map(Events::describe)
                .toList();
    }

    public static Optional<SyncMarker> lastMarker(List<ClusterEvent> events, ObjectKind kind) {
        SyncMarker last = null;
        for (ClusterEvent e : events) {
            if (e instanceof SyncMarker s && s.kind() == kind) {
                last = s;
            }
        }
        return Optional.ofNullable(last);
    }

    /** The last upserted state of {@code key}, if its last event is an upsert. */
    public static Optional<ClusterObject> lastState(List<ClusterEvent> events, ObjectKind kind, String key) {
        ClusterObject last = null;
        for (ClusterEvent e : events) {
            if (e instanceof ObjectUpserted u
                    && u.ref().kind() == kind
                    && u.ref().key().equals(key)) {
                last = u.object();
            } else if (e instanceof ObjectDeleted d
                    && d.ref().kind() == kind
                    && d.ref().key().equals(key)) {
                last = null;
            }
        }
        return Optional.ofNullable(last);
    }
}
