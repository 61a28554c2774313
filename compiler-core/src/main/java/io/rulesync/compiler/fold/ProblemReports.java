package io.rulesync.compiler.fold;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.Fingerprint;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.pcollections.TreePMap;

/**
 * A cluster's current problem reports, folded from its events: per source (a manifest file, or an
 * object an informer saw), the last report that named problems. A report without problems clears its
 * source, and a {@link ProblemSync} clears every source it does not list. Like the view, a pure
 * function of the log, so replaying the stored events rebuilds it; unlike the view, it never affects
 * rules.
 *
 * <p>A report repeating a source's problems changes nothing, so a source keeps the time it was first
 * reported as broken this way (a watcher restart or a resync sends the same problems again).
 */
public final class ProblemReports {
    public static final ProblemReports NONE = new ProblemReports(TreePMap.empty());

    private final TreePMap<String, ProblemsReported> bySource;

    private ProblemReports(TreePMap<String, ProblemsReported> bySource) {
        this.bySource = bySource;
    }

    /** These reports after {@code event} (itself when the event is not about problems, or changes nothing). */
    public ProblemReports apply(ClusterEvent event) {
        if (event instanceof ProblemsReported r) {
            ProblemsReported last = bySource.get(r.source());
            if (r.cleared()) {
                return last == null ? this : new ProblemReports(bySource.minus(r.source()));
            }
            return last != null && last.problems().equals(r.problems())
                    ? this
                    : new ProblemReports(bySource.plus(r.source(), r));
        }
        if (event instanceof ProblemSync s) {
            TreePMap<String, ProblemsReported> kept = bySource;
            for (String source : bySource.keySet()) {
                if (!s.sources().contains(source)) {
                    kept = kept.minus(source);
                }
            }
            return kept == bySource ? this : new ProblemReports(kept);
        }
        return this;
    }

    public ProblemReports applyAll(List<ClusterEvent> events) {
        ProblemReports p = this;
        for (ClusterEvent e : events) {
            p = p.apply(e);
        }
        return p;
    }

    /** Whether {@code event} is about problems only: it can never change a cluster's view or its rules. */
    public static boolean isProblemEvent(ClusterEvent event) {
        return event instanceof ProblemsReported || event instanceof ProblemSync;
    }

    /**
     * Whether {@code event} changes nothing a version is made of: a problem report, a digest that only checks, or the start
     * of a listing (which may hold a cluster's first version back, but holds no fact of its own).
     */
    public static boolean leavesRulesAlone(ClusterEvent event) {
        return isProblemEvent(event) || event instanceof StateDigest || event instanceof ClusterEvent.ListingStarted;
    }

    /** The reports by source, in source order. */
    public SortedMap<String, ProblemsReported> bySource() {
        return bySource;
    }

    /** What a watcher's digest says of these reports ({@link StateDigest#ofProblems}). */
    public Fingerprint fingerprint() {
        return StateDigest.ofProblems(bySource.values());
    }

    /** Objects refused now, summed over the sources ({@link ProblemsReported#refusedObjects}). */
    public int refusedObjects() {
        return bySource.values().stream()
                .mapToInt(ProblemsReported::refusedObjects)
                .sum();
    }

    /**
     * The sources whose report differs from {@code before}'s, in source order: each with its report now,
     * or null where its problems were cleared.
     */
    public SortedMap<String, ProblemsReported> changedSince(ProblemReports before) {
        SortedMap<String, ProblemsReported> out = new TreeMap<>();
        if (before == this) {
            return out;
        }
        for (Map.Entry<String, ProblemsReported> e : bySource.entrySet()) {
            if (!e.getValue().equals(before.bySource.get(e.getKey()))) {
                out.put(e.getKey(), e.getValue());
            }
        }
        for (String source : before.bySource.keySet()) {
            if (!bySource.containsKey(source)) {
                out.put(source, null);
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProblemReports p && p.bySource.equals(bySource);
    }

    @Override
    public int hashCode() {
        return bySource.hashCode();
    }

    @Override
    public String toString() {
        return bySource.keySet().toString();
    }
}
