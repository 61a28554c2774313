package io.rulesync.compiler.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.rules.Chain;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NodeRulesTest {
    private static final ProxySettings SETTINGS = ProxySettings.defaults(IpFamily.IPV4);

    private static Chain chain(NodeRules rules, String prefix) {
        return rules.ruleSet().nat().stream()
                .filter(c -> c.name().startsWith(prefix))
                .findFirst()
                .orElseThrow();
    }

    /** Past 1000 endpoints kube-proxy drops the per-endpoint comments, and only those. */
    @Test
    void largeClusterModeDropsEndpointCommentsOnly() throws Exception {
        NodeRules small = IptablesCompiler.compile(SyntheticCluster.build(100, 10), SyntheticCluster.NODE, SETTINGS);
        NodeRules large = IptablesCompiler.compile(SyntheticCluster.build(120, 10), SyntheticCluster.NODE, SETTINGS);
        assertThat(small.largeClusterMode()).isFalse();
        assertThat(large.largeClusterMode()).isTrue();

        assertThat(chain(small, "KUBE-SEP-").rules()).allMatch(r -> r.startsWith("-m comment --comment ns"));
        assertThat(chain(large, "KUBE-SEP-").rules()).noneMatch(r -> r.contains("--comment"));
        assertThat(chain(large, "KUBE-SEP-").rules().get(0)).matches("-s 10\\.\\S+ -j KUBE-MARK-MASQ");
        assertThat(chain(large, "KUBE-SVC-").rules()).last().asString().matches("-j KUBE-SEP-\\w{16}");
        assertThat(large.ruleSet().nat().get(0).rules()).allMatch(r -> r.startsWith("-m comment --comment "));
    }

    /** A change that crosses the threshold rewrites every port, as kube-proxy would. */
    @Test
    void crossingTheThresholdIncrementallyMatchesAFullCompile() throws Exception {
        // 109 Services, every 13th without endpoints: 101 x 10 = 1010 endpoints, one Service over the threshold.
        ClusterState big = SyntheticCluster.build(109, 10);
        NamespacedName victim = SyntheticCluster.serviceName(0);
        ClusterState smaller = big.withoutService(victim);
        NodeRules rules = IptablesCompiler.compile(big, SyntheticCluster.NODE, SETTINGS);

        NodeRules shrunk = rules.update(smaller, Set.of(victim));
        assertThat(shrunk.largeClusterMode()).isFalse();
        assertThat(shrunk.render())
                .isEqualTo(IptablesCompiler.compile(smaller, SyntheticCluster.NODE, SETTINGS)
                        .render());

        NodeRules grown = shrunk.update(big, Set.of(victim));
        assertThat(grown.largeClusterMode()).isTrue();
        assertThat(grown.render()).isEqualTo(rules.render());
    }

    @Test
    void unknownNodesAreRefused() {
        assertThatThrownBy(() -> IptablesCompiler.compile(SyntheticCluster.build(1, 1), "nope", SETTINGS))
                .isInstanceOf(UnknownNodeException.class)
                .hasMessageContaining("'nope'");
    }

    @Test
    void aChangedNodeRecompilesEverything() throws Exception {
        ClusterState state = SyntheticCluster.build(20, 3);
        NodeRules rules = IptablesCompiler.compile(state, "node-1", SETTINGS);
        ClusterState moved =
                state.withNode(new io.rulesync.model.cluster.Node("node-1", "zone-z", java.util.List.of()));
        assertThat(rules.update(moved, Set.of()).render())
                .isEqualTo(IptablesCompiler.compile(moved, "node-1", SETTINGS).render());
        assertThatThrownBy(() -> rules.update(state.withoutNode("node-1"), Set.of()))
                .isInstanceOf(UnknownNodeException.class);
    }
}
