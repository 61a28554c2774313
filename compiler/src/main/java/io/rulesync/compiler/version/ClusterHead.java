package io.rulesync.compiler.version;

import io.rulesync.compiler.fold.Changes;
import io.rulesync.compiler.fold.ClusterFold;
import io.rulesync.compiler.fold.ClusterView;
import io.rulesync.compiler.iptables.ClusterCompiler;
import io.rulesync.compiler.iptables.CompiledCluster;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDiff;
import java.util.List;
import java.util.Objects;

/**
 * One cluster as the compiler holds it: the view folded from all its events so far, the rules
 * compiled from that view, the rules of its latest version, and that version's number. Immutable:
 * {@link #apply} returns the next head, which the caller adopts only once the new version is stored.
 *
 * <p>A new version is due exactly when some node's rules (or the set of nodes) differ from the
 * latest version's; events that change nothing that matters produce no version.
 */
public final class ClusterHead {
    private final String cluster;
    private final ClusterView view;
    private final CompiledCluster compiled;
    private final ClusterRules published;
    private final long version;

    private ClusterHead(String cluster, ClusterView view, CompiledCluster compiled, ClusterRules published, long version) {
        this.cluster = cluster;
        this.view = view;
        this.compiled = compiled;
        this.published = published;
        this.version = version;
    }

    /** A cluster no event has been seen for: version 0, no rules. */
    public static ClusterHead empty(String cluster) {
        return new ClusterHead(cluster, ClusterView.EMPTY, null, ClusterRules.EMPTY, 0);
    }

    /**
     * A head rebuilt after a restart: the view is the fold of every stored event, and the latest
     * stored version is {@code version} with content {@code published}. If today's compiler
     * compiles the view differently (an upgrade), {@link #pendingDiff()} says so.
     */
    public static ClusterHead rebuilt(String cluster, List<ClusterEvent> events, long version, ClusterRules published) {
        ClusterView view = ClusterFold.applyAll(ClusterView.EMPTY, events).view();
        CompiledCluster compiled = version == 0 && events.isEmpty() ? null : ClusterCompiler.compile(view.state(), view.settings());
        return new ClusterHead(cluster, view, compiled, published, version);
    }

    /** The result of applying a batch of events. */
    public record Step(ClusterHead next, Changes changes, RulesDiff diff) {
        /** Whether the batch produced a new version ({@code next.version()} is then one higher). */
        public boolean newVersion() {
            return !diff.isEmpty();
        }
    }

    public Step apply(List<ClusterEvent> events) {
        for (ClusterEvent e : events) {
            if (!e.cluster().equals(cluster)) {
                throw new IllegalArgumentException("event of cluster " + e.cluster() + " applied to " + cluster);
            }
        }
        ClusterFold.Folded folded = ClusterFold.applyAll(view, events);
        CompiledCluster next;
        RulesDiff diff;
        if (compiled == null) {
            next = ClusterCompiler.compile(folded.view().state(), folded.view().settings());
            diff = RulesDiff.between(published, next.rules(), null);
        } else {
            CompiledCluster.Update u = compiled.update(folded.view().state(), folded.view().settings(),
                    folded.changes().services(), folded.changes().nodes());
            next = u.compiled();
            // Only when the published rules are what we last compiled may the diff look at touched units alone.
            boolean inStep = published.equals(compiled.rules());
            diff = RulesDiff.between(published, next.rules(), inStep ? u.touched() : null);
        }
        long nextVersion = diff.isEmpty() ? version : version + 1;
        ClusterRules nextPublished = diff.isEmpty() ? published : next.rules();
        return new Step(new ClusterHead(cluster, folded.view(), next, nextPublished, nextVersion), folded.changes(), diff);
    }

    /** What a version would have to change to catch up with today's compile (empty normally). */
    public RulesDiff pendingDiff() {
        return compiled == null ? RulesDiff.between(published, published, null)
                : RulesDiff.between(published, compiled.rules(), null);
    }

    public String cluster() {
        return cluster;
    }

    public ClusterView view() {
        return view;
    }

    public ClusterRules published() {
        return published;
    }

    public long version() {
        return version;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterHead h && h.cluster.equals(cluster) && h.version == version
                && h.view.equals(view) && h.published.equals(published);
    }

    @Override
    public int hashCode() {
        return Objects.hash(cluster, version, published);
    }
}
