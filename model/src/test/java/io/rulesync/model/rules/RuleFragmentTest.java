package io.rulesync.model.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RuleFragmentTest {
    private static final RuleFragment PORT = new RuleFragment(
            Map.of(
                    DispatchChain.NAT_SERVICES,
                    List.of("-m comment --comment \"a/b cluster IP\" -j KUBE-SVC-A"),
                    DispatchChain.FILTER_EXTERNAL_SERVICES,
                    List.of("-d 1.2.3.4 -j DROP")),
            List.of(),
            List.of(
                    new Chain("KUBE-SVC-A", List.of("-j KUBE-SEP-A")),
                    new Chain("KUBE-SEP-A", List.of("-j DNAT --to-destination 10.0.0.1:80"))));
    private static final RuleFragment FIXED = new RuleFragment(
            Map.of(DispatchChain.NAT_SERVICES, List.of("-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS")),
            List.of(new Chain(TopChains.FORWARD, List.of("-j ACCEPT"))),
            List.of(
                    new Chain(TopChains.POSTROUTING, List.of("-j MASQUERADE")),
                    new Chain(TopChains.MARK_MASQ, List.of())));

    @Test
    void textIsCanonicalAndReadsBack() {
        assertThat(PORT.text()).isEqualTo("""
                *filter
                -A KUBE-EXTERNAL-SERVICES -d 1.2.3.4 -j DROP
                *nat
                :KUBE-SVC-A
                :KUBE-SEP-A
                -A KUBE-SERVICES -m comment --comment "a/b cluster IP" -j KUBE-SVC-A
                -A KUBE-SVC-A -j KUBE-SEP-A
                -A KUBE-SEP-A -j DNAT --to-destination 10.0.0.1:80
                """);
        assertThat(RuleFragment.parse(PORT.text())).isEqualTo(PORT);
        assertThat(RuleFragment.parse(FIXED.text())).isEqualTo(FIXED);
        assertThat(RuleFragment.parse(PORT.text()).hash())
                .isEqualTo(PORT.hash())
                .hasSize(64);
        assertThat(RuleFragment.EMPTY.text()).isEmpty();
    }

    @Test
    void refusesTextItDidNotWrite() {
        assertThatThrownBy(() -> RuleFragment.parse("-A KUBE-SERVICES -j X\n")).hasMessageContaining("outside a table");
        assertThatThrownBy(() -> RuleFragment.parse("*nat\n-A KUBE-SVC-B -j X\n"))
                .hasMessageContaining("undeclared chain KUBE-SVC-B");
        assertThatThrownBy(() -> RuleFragment.parse("*mangle\n")).hasMessageContaining("unknown table");
        assertThatThrownBy(() -> RuleFragment.parse("*nat\n:A\n:A\n")).hasMessageContaining("declared twice");
        assertThatThrownBy(() -> RuleFragment.parse("*nat\nCOMMIT\n")).hasMessageContaining("unexpected");
    }

    @Test
    void readsLineByLineAsItDidWithSplit() {
        // Line numbers count blank lines; a rule's body ends at its line; the last line needs no break.
        assertThatThrownBy(() -> RuleFragment.parse("*nat\n:A\n\n-A A\n-A A -j X\n"))
                .hasMessage("line 4: rule without a body");
        assertThatThrownBy(() -> RuleFragment.parse("*nat\n:A\n-A B -j X"))
                .hasMessage("line 3: rule for undeclared chain B");
        assertThatThrownBy(() -> RuleFragment.parse("*nat\n-")).hasMessage("line 2: unexpected '-'");
        RuleFragment f = RuleFragment.parse("*nat\n:A\n:B\n-A A -j B\n-A B -j X\n-A A -j Y\n-A KUBE-SERVICES -j A");
        assertThat(f.chains(Table.NAT))
                .containsExactly(new Chain("A", List.of("-j B", "-j Y")), new Chain("B", List.of("-j X")));
        assertThat(f.appended(DispatchChain.NAT_SERVICES)).containsExactly("-j A");
        assertThat(RuleFragment.parse("")).isEqualTo(RuleFragment.EMPTY);
    }

    @Test
    void assemblesInKubeProxysDeclarationOrderWithTheFixedTailLast() {
        RuleSet rs = RuleSetAssembly.assemble(IpFamily.IPV4, FIXED, List.of(PORT, PORT));
        assertThat(rs.filter())
                .extracting(Chain::name)
                .containsExactly(
                        "KUBE-SERVICES",
                        "KUBE-EXTERNAL-SERVICES",
                        "KUBE-FORWARD",
                        "KUBE-NODEPORTS",
                        "KUBE-PROXY-FIREWALL");
        assertThat(rs.nat())
                .extracting(Chain::name)
                .containsExactly(
                        "KUBE-SERVICES",
                        "KUBE-NODEPORTS",
                        "KUBE-POSTROUTING",
                        "KUBE-MARK-MASQ",
                        "KUBE-SVC-A",
                        "KUBE-SEP-A",
                        "KUBE-SVC-A",
                        "KUBE-SEP-A");
        assertThat(rs.nat().get(0).rules()).last().isEqualTo("-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS");
        assertThat(rs.nat().get(0).rules()).hasSize(3);
    }
}
