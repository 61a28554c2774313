package io.rulesync.agent.plan;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What one node's rules are at one version of its cluster, as the agent tracks them: the
 * cluster's fragments cut down to those that can apply to this node. Deltas move it forward one
 * version at a time; anything else (a gap, a zone change) asks for a snapshot.
 */
public record NodeView(String cluster, String node, long version, ClusterRules rules, String lineage) {
    /** @param lineage the version's {@link Lineage}: a delta that follows a version of another lineage is not applied */
    public NodeView {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(rules, "rules");
        Objects.requireNonNull(lineage, "lineage");
    }

    /** The result of offering a delta. */
    public sealed interface Step {}

    /** The delta follows this version: here is the next view, and the units whose fragments changed for this node. */
    public record Advanced(NodeView next, Set<Unit> touched) implements Step {
        public Advanced {
            touched = Set.copyOf(touched);
        }
    }

    /** Already at or past the delta's target (a redelivery): nothing to do. */
    public record Stale() implements Step {}

    /** The delta does not follow this version, or changes this node's zone: take a snapshot. */
    public record NeedsSnapshot(String reason) implements Step {}

    public static NodeView of(RulesSnapshot snapshot, String node) {
        return new NodeView(
                snapshot.cluster(), node, snapshot.version(), snapshot.rules().forNode(node), snapshot.lineage());
    }

    /** Whether the node is part of this version (the Node object exists in the cluster). */
    public boolean knowsNode() {
        return rules.nodes().containsKey(node);
    }

    public Optional<RuleSet> ruleSet(IpFamily family) {
        return rules.ruleSet(node, family);
    }

    public Step offer(RulesDelta delta) {
        if (!delta.cluster().equals(cluster)) {
            throw new IllegalArgumentException("delta of cluster " + delta.cluster() + " offered to " + cluster);
        }
        if (delta.target() <= version) {
            return new Stale();
        }
        if (delta.base() != version) {
            return new NeedsSnapshot(
                    "delta " + delta.base() + "->" + delta.target() + " does not follow version " + version);
        }
        if (!Lineage.agree(lineage, delta.baseLineage())) {
            return new NeedsSnapshot(
                    "delta " + delta.base() + "->" + delta.target() + " follows version " + version + " of lineage "
                            + Lineage.shortForm(delta.baseLineage()) + ", but this node runs version " + version
                            + " of lineage "
                            + Lineage.shortForm(lineage)
                            + " (the control plane's database was restored from a backup, or lost commits)");
        }
        String nextLineage = delta.lineage(); // unknown for a delta from before lineages: nothing to compare then
        String zone = rules.nodes().get(node);
        List<RulesDiff.NodeChange> mine = new ArrayList<>();
        for (RulesDiff.NodeChange n : delta.diff().nodes()) {
            if (n.node().equals(node)) {
                if (zone != null || n.zoneAfter() == null) {
                    return new NeedsSnapshot("node " + node
                            + (n.zoneAfter() == null ? " left the cluster" : " moved to zone '" + n.zoneAfter() + "'")
                            + " in version " + delta.target());
                }
                mine.add(n);
            }
        }
        if (zone == null && mine.isEmpty()) {
            // Not (yet) a node of this cluster: nothing can apply to it.
            return new Advanced(new NodeView(cluster, node, delta.target(), rules, nextLineage), Set.of());
        }
        if (zone == null) {
            // The node just appeared: its fragments may all predate this delta.
            return new NeedsSnapshot("node " + node + " joined the cluster in version " + delta.target());
        }
        List<RulesDiff.FragmentChange> relevant = new ArrayList<>();
        Set<Unit> touched = new TreeSet<>();
        for (RulesDiff.FragmentChange c : delta.diff().fragments()) {
            if (ClusterRules.matches(c.key().variant(), node, zone)) {
                relevant.add(c);
                touched.add(c.key().unit());
            }
        }
        ClusterRules next = new RulesDiff(relevant, List.of()).applyTo(rules);
        return new Advanced(new NodeView(cluster, node, delta.target(), next, nextLineage), touched);
    }
}
