package io.rulesync.agent.testing;

import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A cluster's versions compiled by the real compiler from a synthetic cluster and random changes
 * (Services added and removed, endpoints changed, slices gone), with the deltas between them as
 * they travel on the wire.
 */
public final class History {
    public static final String CLUSTER = "c1";
    public static final String NODE = SyntheticCluster.NODE;
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");

    private final List<ClusterRules> versions = new ArrayList<>();
    private final List<String> lineages = new ArrayList<>();
    private ClusterState state;
    private int nextService;

    public History(int services) {
        state = SyntheticCluster.build(services, 3);
        nextService = services;
        versions.add(ClusterCompiler.compile(state, ClusterSettings.DEFAULT).rules());
        lineages.add(Lineage.next(Lineage.UNKNOWN, 1, RulesDiff.between(ClusterRules.EMPTY, versions.get(0), null)));
    }

    /** A history of rules the test compiled itself, from {@code first}; {@link #next(ClusterRules)} goes on. */
    public History(ClusterRules first) {
        versions.add(first);
        lineages.add(Lineage.next(Lineage.UNKNOWN, 1, RulesDiff.between(ClusterRules.EMPTY, first, null)));
    }

    /** The next version: {@code rules}; returns its delta (read back from its wire form). */
    public RulesDelta next(ClusterRules rules) {
        return step(rules);
    }

    /**
     * The history as a database restored from a backup holds it: the versions after {@code version} are gone, and the
     * next ones reuse their numbers (with other changes, and so other lineages).
     */
    public void restoredTo(long version) {
        while (versions.size() > version) {
            versions.remove(versions.size() - 1);
            lineages.remove(lineages.size() - 1);
        }
    }

    public String lineage(long version) {
        return lineages.get((int) version - 1);
    }

    /** Version numbers start at 1 (0 means "nothing"). */
    public long latest() {
        return versions.size();
    }

    public ClusterRules rules(long version) {
        return versions.get((int) version - 1);
    }

    public RulesSnapshot snapshot(long version, String node) {
        return new RulesSnapshot(CLUSTER, version, T, rules(version).forNode(node), lineage(version));
    }

    /** The api's snapshots of this history: the latest, or any version, cut down to the node. */
    public SnapshotSource snapshots() {
        return new SnapshotSource() {
            @Override
            public RulesSnapshot latest(String cluster, String node) {
                return snapshot(History.this.latest(), node);
            }

            @Override
            public RulesSnapshot at(String cluster, String node, long version) {
                return snapshot(version, node);
            }
        };
    }

    /** Next version after {@code changes} random changes; returns its delta (read back from its wire form). */
    public RulesDelta next(Random r, int changes) {
        for (int c = 0; c < changes; c++) {
            int op = r.nextInt(4);
            int i = r.nextInt(nextService);
            NamespacedName svc = SyntheticCluster.serviceName(i);
            if (op == 0) {
                state = state.withService(SyntheticCluster.service(nextService))
                        .withEndpointSlice(SyntheticCluster.slice(nextService, 1 + r.nextInt(3), 0));
                nextService++;
            } else if (op == 1) {
                state = state.withoutService(svc)
                        .withoutEndpointSlice(SyntheticCluster.slice(i, 1, 0).name());
            } else if (op == 2 && state.service(svc).isPresent()) {
                state = state.withEndpointSlice(SyntheticCluster.slice(i, 1 + r.nextInt(4), 1 + r.nextInt(5)));
            } else {
                state = state.withoutEndpointSlice(
                        SyntheticCluster.slice(i, 1, 0).name());
            }
        }
        return step(ClusterCompiler.compile(state, ClusterSettings.DEFAULT).rules());
    }

    /** Changes one endpoint of Service i. */
    public RulesDelta moveEndpoint(int i, int generation) {
        state = state.withEndpointSlice(SyntheticCluster.slice(i, 3, generation));
        return step(ClusterCompiler.compile(state, ClusterSettings.DEFAULT).rules());
    }

    private RulesDelta step(ClusterRules next) {
        ClusterRules prev = versions.get(versions.size() - 1);
        String base = lineages.get(lineages.size() - 1);
        RulesDiff diff = RulesDiff.between(prev, next, null);
        versions.add(next);
        lineages.add(Lineage.next(base, versions.size(), diff));
        RulesDelta d = new RulesDelta(
                CLUSTER, versions.size() - 1, versions.size(), T, diff, base, lineages.get(lineages.size() - 1));
        return RulesDelta.fromJsonParts(d.toJsonParts(900_000));
    }
}
