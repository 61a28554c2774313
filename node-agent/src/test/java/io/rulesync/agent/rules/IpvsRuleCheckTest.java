package io.rulesync.agent.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Table;
import io.rulesync.testsupport.cluster.ClusterGenerator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IpvsRuleCheckTest {

    /** Whatever the compiler writes passes: random clusters, both families, every setting that shapes the rules. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void everyRuleTheCompilerWritesPasses(long seed) {
        Random r = new Random(seed);
        ClusterState state = new ClusterGenerator(r).cluster(15).state();
        ClusterSettings settings = new ClusterSettings(
                List.of(IpFamily.IPV4, IpFamily.IPV6),
                seed % 2 == 0 ? List.of() : List.of(Cidr.parse("10.180.0.0/16"), Cidr.parse("fd00:180::/64")),
                seed % 3 == 0,
                (int) (seed % 32),
                List.of());
        ClusterRules rules = ClusterCompiler.compile(state, settings).rules();
        for (Node n : state.nodes()) {
            for (IpFamily f : settings.families()) {
                IpvsRules ipvs = rules.ipvs(n.name(), f).orElseThrow();
                assertThatCode(() -> IpvsRuleCheck.check(ipvs))
                        .as("seed %d node %s %s", seed, n.name(), f)
                        .doesNotThrowAnyException();
                // Each line reads back as the typed rule that wrote it.
                for (String line : ipvs.natRules()) {
                    assertThat(readBack(Table.NAT, f, line)).isEqualTo(line);
                }
                for (String line : ipvs.filterRules()) {
                    assertThat(readBack(Table.FILTER, f, line)).isEqualTo(line);
                }
            }
        }
    }

    private static String readBack(Table table, IpFamily family, String line) {
        String chain = line.substring(3, line.indexOf(' ', 3));
        return "-A " + chain + " "
                + RuleGrammar.parse(RuleGrammar.Dialect.IPVS, table, family, chain, line.substring(4 + chain.length()))
                        .restoreForm();
    }

    static IpvsRules with(List<String> nat, List<String> filter) {
        return new IpvsRules(IpFamily.IPV4, new TreeSet<>(), List.of(), Map.of(), nat, filter);
    }

    @Test
    void anythingElseIsRefusedNamingTheRule() {
        String ok = "-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN";
        assertThatCode(() -> IpvsRuleCheck.check(with(List.of(ok), List.of()))).doesNotThrowAnyException();
        // Another chain, another target, a word of iptables-restore's own syntax, an address of the wrong family.
        assertThatThrownBy(() -> IpvsRuleCheck.check(with(List.of("-A PREROUTING -j ACCEPT"), List.of())))
                .isInstanceOf(RejectedRuleException.class)
                .hasMessageContaining("chain name 'PREROUTING' is not one rulesync owns");
        assertThatThrownBy(() -> IpvsRuleCheck.check(
                        with(List.of("-A KUBE-SERVICES -j DNAT --to-destination 10.0.0.1:22"), List.of())))
                .hasMessageContaining("-j DNAT: it is not a chain rulesync owns and jumps to, nor a target it uses");
        assertThatThrownBy(() -> IpvsRuleCheck.check(
                        with(List.of("-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN COMMIT"), List.of())))
                .hasMessageContaining("COMMIT after -j RETURN");
        assertThatThrownBy(
                        () -> IpvsRuleCheck.check(with(List.of("-A KUBE-SERVICES -s fd00::/8 -j RETURN"), List.of())))
                .hasMessageContaining("-s fd00::/8: an ipv6 address in an ipv4 rule set");
        // The filter chains in the nat table, a comment of someone else's, a quote that never ends, a set of the other
        // family.
        assertThatThrownBy(() -> IpvsRuleCheck.check(with(List.of("-A KUBE-IPVS-FILTER -j RETURN"), List.of())))
                .hasMessageContaining("nat chain KUBE-IPVS-FILTER");
        assertThatThrownBy(() -> IpvsRuleCheck.check(
                        with(List.of(), List.of("-A KUBE-FORWARD -m comment --comment \"x\" -j ACCEPT"))))
                .hasMessageContaining("--comment 'x' is not one of IPVS mode's");
        assertThatThrownBy(() -> IpvsRuleCheck.check(
                        with(List.of(), List.of("-A KUBE-FORWARD -m comment --comment \"kubernetes"))))
                .hasMessageContaining("unterminated quoted value");
        assertThatThrownBy(() -> IpvsRuleCheck.check(with(
                        List.of(),
                        List.of("-A KUBE-IPVS-FILTER -m set --match-set KUBE-6-CLUSTER-IP dst,dst -j RETURN"))))
                .hasMessageContaining("--match-set KUBE-6-CLUSTER-IP is not one of IPVS mode's ipv4 sets");
        assertThatThrownBy(() -> IpvsRuleCheck.check(
                        with(List.of("-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000\n-A X"), List.of())))
                .hasMessageContaining("is not allowed in a rule");
        // iptables mode's matches are not IPVS mode's.
        assertThatThrownBy(() -> IpvsRuleCheck.check(with(
                        List.of("-A KUBE-SERVICES -m statistic --mode random --probability 0.5 -j RETURN"), List.of())))
                .hasMessageContaining("match -m statistic is not one rulesync emits in IPVS mode");
    }
}
