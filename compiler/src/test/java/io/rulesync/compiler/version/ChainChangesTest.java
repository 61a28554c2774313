package io.rulesync.compiler.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.ChainChanges;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.Table;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A node's own view of a delta: exactly the chains that changed on that node. */
class ChainChangesTest {

    @Test
    void oneEndpointMoreChangesOneServiceChainAndAddsOneEndpointChain() {
        ClusterHead v1 = ClusterHead.empty("demo-a")
                .apply(List.of(ClusterHeadTest.NODE_A, ClusterHeadTest.WEB, ClusterHeadTest.slice("10.244.0.10")))
                .next();
        ClusterHead.Step s2 = v1.apply(List.of(ClusterHeadTest.slice("10.244.0.10", "10.244.0.11")));
        RulesDelta delta = RulesDelta.fromJson(new RulesDelta("demo-a", 1, 2, Instant.EPOCH, s2.diff()).toJson());

        ChainChanges changes = ChainChanges.forNode(v1.published(), delta, "node-a", IpFamily.IPV4);
        ChainChanges.TableChanges nat = changes.tables().stream()
                .filter(t -> t.table() == Table.NAT)
                .findFirst()
                .orElseThrow();
        assertThat(nat.changed())
                .extracting(Chain::name)
                .singleElement()
                .asString()
                .startsWith("KUBE-SVC-");
        assertThat(nat.added())
                .extracting(Chain::name)
                .singleElement()
                .asString()
                .startsWith("KUBE-SEP-");
        assertThat(nat.added().get(0).rules()).last().asString().endsWith("--to-destination 10.244.0.11:8080");
        assertThat(nat.removed()).isEmpty();
        assertThat(changes.tables().stream()
                        .filter(t -> t.table() == Table.FILTER)
                        .findFirst()
                        .orElseThrow()
                        .isEmpty())
                .isTrue();

        // Nothing changes for a node that is not in the cluster, and a no-op delta is empty.
        assertThat(ChainChanges.forNode(v1.published(), delta, "node-x", IpFamily.IPV4)
                        .isEmpty())
                .isTrue();
        assertThat(ChainChanges.between(
                                v1.published().ruleSet("node-a", IpFamily.IPV4).orElseThrow(),
                                v1.published().ruleSet("node-a", IpFamily.IPV4).orElseThrow())
                        .isEmpty())
                .isTrue();
    }
}
