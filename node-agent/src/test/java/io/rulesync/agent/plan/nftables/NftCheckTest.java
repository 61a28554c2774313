package io.rulesync.agent.plan.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftContent;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NftCheckTest {
    /** A small table: a chain with two rules, a map with two elements, an affinity set the kernel fills. */
    private static final NftTransaction TABLE = new NftTransaction(
            IpFamily.IPV4,
            List.of(
                    new NftOp.AddTable(),
                    new NftOp.AddChain("service-A"),
                    new NftOp.FlushChain("service-A"),
                    new NftOp.AddMap("service-ips", "ipv4_addr . inet_proto . inet_service", "c"),
                    new NftOp.AddSet("affinity-A", "ipv4_addr", List.of("dynamic", "timeout"), 10800, null),
                    new NftOp.AddElement("service-ips", "10.96.0.1 . tcp . 80", null, "goto service-A"),
                    new NftOp.AddElement("service-ips", "10.96.0.2 . tcp . 80", null, "goto service-A"),
                    // Two ports of one Service add the same element: it is one element in the kernel.
                    new NftOp.AddElement("service-ips", "10.96.0.2 . tcp . 80", null, "goto service-A"),
                    new NftOp.AddRule("service-A", "ip saddr @affinity-A goto service-A"),
                    new NftOp.AddRule("service-A", "numgen random mod 1 vmap { 0 : goto service-A }")));

    private static final NftCheck.Expected EXPECTED = NftCheck.Expected.of(NftContent.of(TABLE));

    private static KernelTable kernel(List<String> rules, int elements, int affinity) {
        return new KernelTable(Map.of("service-A", rules), Map.of("service-ips", elements, "affinity-A", affinity));
    }

    @Test
    void whatTheVersionHasIsNoProblemWhateverTheKernelFilledIn() {
        assertThat(EXPECTED.rules()).isEqualTo(Map.of("service-A", 2));
        assertThat(NftCheck.problems(EXPECTED, Optional.of(kernel(List.of("r1", "r2"), 2, 7)), Map.of()))
                .isEmpty();
    }

    @Test
    void eachDifferenceIsOneLine() {
        assertThat(NftCheck.problems(EXPECTED, Optional.empty(), Map.of()))
                .containsExactly("the kube-proxy table is missing");
        assertThat(NftCheck.problems(EXPECTED, Optional.of(kernel(List.of("r1"), 1, 0)), Map.of()))
                .containsExactly("chain service-A has 1 rules, not 2", "set service-ips has 1 elements, not 2");
        KernelTable extra = new KernelTable(
                Map.of("service-A", List.of("r1", "r2"), "intruder", List.of()),
                Map.of("service-ips", 2, "affinity-A", 0, "mine", 0));
        assertThat(NftCheck.problems(EXPECTED, Optional.of(extra), Map.of()))
                .containsExactly("chain intruder is not the version's", "set mine is not the version's");
        KernelTable gone = new KernelTable(Map.of(), Map.of("service-ips", 2));
        assertThat(NftCheck.problems(EXPECTED, Optional.of(gone), Map.of()))
                .containsExactly("chain service-A is missing", "set affinity-A is missing");
    }

    @Test
    void aRuleEditedInPlaceShowsAgainstTheEarlierReading() {
        Map<String, List<String>> earlier = Map.of("service-A", List.of("r1", "r2"));
        assertThat(NftCheck.problems(EXPECTED, Optional.of(kernel(List.of("r1", "r2"), 2, 0)), earlier))
                .isEmpty();
        assertThat(NftCheck.problems(EXPECTED, Optional.of(kernel(List.of("r1", "r2 edited"), 2, 0)), earlier))
                .containsExactly("chain service-A was changed");
    }
}
