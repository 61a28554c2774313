package io.rulesync.agent.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Table;
import org.junit.jupiter.api.Test;

/** The in-memory packet filter refuses what iptables-restore refuses, and a refused script changes nothing. */
class MemoryNetfilterTest {
    private final MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");

    @Test
    void aReferencedChainCannotBeDeletedUntilNothingJumpsToIt() throws Exception {
        nf.restore(
                "*nat\n:KUBE-SVC-A - [0:0]\n:KUBE-SEP-B - [0:0]\n-A KUBE-SVC-A -j KUBE-SEP-B\n-A KUBE-SVC-A -j KUBE-SEP-B\nCOMMIT\n");
        assertThatThrownBy(() -> nf.restore("*nat\n-X KUBE-SEP-B\nCOMMIT\n")).hasMessageContaining("still referenced");
        assertThatThrownBy(() -> nf.restore("*nat\n-D KUBE-SVC-A 1\n-X KUBE-SEP-B\nCOMMIT\n"))
                .hasMessageContaining("still referenced");
        // The refused script's -D was undone: both jumps are back, and still counted.
        assertThat(nf.chain(Table.NAT, "KUBE-SVC-A").orElseThrow()).hasSize(3);
        assertThatThrownBy(() -> nf.restore("*nat\n-D KUBE-SVC-A 1\n-X KUBE-SEP-B\nCOMMIT\n"))
                .hasMessageContaining("still referenced");
        nf.restore("*nat\n:KUBE-SVC-A - [0:0]\n-X KUBE-SEP-B\nCOMMIT\n");
        assertThat(nf.chain(Table.NAT, "KUBE-SEP-B")).isEmpty();
    }

    @Test
    void refusesWhatIptablesRestoreRefuses() {
        assertThatThrownBy(() -> nf.restore("*nat\n-A KUBE-SVC-X -j RETURN\nCOMMIT\n"))
                .hasMessageContaining("no chain KUBE-SVC-X");
        assertThatThrownBy(() -> nf.restore("*nat\n:KUBE-SVC-X - [0:0]\n-A KUBE-SVC-X -j KUBE-SEP-GONE\nCOMMIT\n"))
                .hasMessageContaining("jump to missing chain KUBE-SEP-GONE");
        assertThatThrownBy(() -> nf.restore("*nat\n:KUBE-SVC-X - [0:0]\n-I KUBE-SVC-X 2 -j RETURN\nCOMMIT\n"))
                .hasMessageContaining("Index of insertion too big");
        assertThatThrownBy(() -> nf.restore("*nat\n:KUBE-SVC-X - [0:0]\n-D KUBE-SVC-X -j RETURN\nCOMMIT\n"))
                .hasMessageContaining("Bad rule");
        assertThat(nf.chainNames(Table.NAT)).isEmpty();
    }
}
