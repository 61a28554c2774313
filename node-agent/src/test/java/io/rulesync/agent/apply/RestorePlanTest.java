package io.rulesync.agent.apply;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.agent.testing.History;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.Table;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plans run on the in-memory packet filter, which follows iptables-restore's rules: an incremental
 * plan from version to version must leave exactly what a full load of the last version leaves.
 */
class RestorePlanTest {
    private static final String FOREIGN = "-s 203.0.113.7/32 -j DROP";

    static RuleSet rules(History h, long v) {
        return h.rules(v).ruleSet(History.NODE, IpFamily.IPV4).orElseThrow();
    }

    static void assertHolds(MemoryNetfilter nf, RuleSet expected) {
        for (Table t : Table.values()) {
            for (Chain c : expected.chains(t)) {
                assertThat(Applier.compare(nf, t, c)).as("%s %s", t, c.name()).isNull();
            }
            List<String> owned = nf.chainNames(t).stream()
                    .filter(c -> OwnedChains.owns(t, c))
                    .filter(c -> !c.equals(OwnedChains.CANARY))
                    .toList();
            assertThat(owned)
                    .containsExactlyInAnyOrderElementsOf(
                            expected.chains(t).stream().map(Chain::name).toList());
        }
    }

    static Stream<Long> seeds() {
        return IntStream.range(0, 25).mapToObj(i -> 400L + i);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void incrementalPlansEqualAFullLoad(long seed) throws Exception {
        Random r = new Random(seed);
        History h = new History(40);
        MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        nf.restore("*filter\n:OTHER-CHAIN - [0:0]\n-A INPUT " + FOREIGN + "\n-A OTHER-CHAIN -j ACCEPT\nCOMMIT\n");
        nf.restore(RestorePlan.full(rules(h, 1), List.of(), List.of()).script());
        for (int step = 0; step < 12; step++) {
            long v = h.latest();
            h.next(r, 1 + r.nextInt(4));
            RestorePlan plan = RestorePlan.between(rules(h, v), rules(h, v + 1));
            nf.restore(plan.script());
            assertHolds(nf, rules(h, v + 1));
        }
        assertThat(nf.chain(Table.FILTER, "INPUT").orElseThrow()).contains("-A INPUT " + FOREIGN);
        assertThat(nf.chain(Table.FILTER, "OTHER-CHAIN").orElseThrow())
                .containsExactly("-N OTHER-CHAIN", "-A OTHER-CHAIN -j ACCEPT");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void narrowedPlansEqualFullOnes(long seed) throws Exception {
        Random r = new Random(seed);
        History h = new History(40);
        MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        nf.restore(RestorePlan.full(rules(h, 1), List.of(), List.of()).script());
        for (int step = 0; step < 8; step++) {
            long v = h.latest();
            RulesDelta d = h.next(r, 1 + r.nextInt(4));
            java.util.Set<io.rulesync.model.rules.Unit> units = new java.util.TreeSet<>();
            d.diff().fragments().forEach(c -> units.add(c.key().unit()));
            NarrowedChange n = NarrowedChange.of(h.rules(v), h.rules(v + 1), History.NODE, IpFamily.IPV4, units);
            RestorePlan narrow = RestorePlan.between(n.before(), n.after());
            assertThat(narrow.lines())
                    .isEqualTo(RestorePlan.between(rules(h, v), rules(h, v + 1)).lines());
            nf.restore(narrow.script());
            assertHolds(nf, rules(h, v + 1));
            assertThat(n.after().ruleCount() - n.before().ruleCount())
                    .isEqualTo(rules(h, v + 1).ruleCount() - rules(h, v).ruleCount());
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aFullLoadInSmallBatchesReachesTheTargetFromAnyState(long seed) throws Exception {
        Random r = new Random(seed);
        History h = new History(30);
        for (int i = 0; i < 6; i++) {
            h.next(r, 1 + r.nextInt(5));
        }
        MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        nf.restore("*filter\n-A INPUT " + FOREIGN + "\nCOMMIT\n");
        long from = 1 + r.nextInt(7);
        long to = 1 + r.nextInt(7);
        nf.restore(RestorePlan.full(rules(h, from), List.of(), List.of()).script());
        List<RestorePlan.TableChain> stale = new java.util.ArrayList<>();
        for (Table t : Table.values()) {
            nf.chainNames(t).stream()
                    .filter(c -> OwnedChains.owns(t, c))
                    .forEach(c -> stale.add(new RestorePlan.TableChain(t, c)));
        }
        // Each batch is its own restore: the in-memory kernel refuses any jump to a chain not there yet.
        for (String script : FullLoad.scripts(nf, rules(h, to), stale, 40)) {
            nf.restore(script);
        }
        assertHolds(nf, rules(h, to));
        assertThat(nf.chain(Table.NAT, OwnedChains.CANARY)).isPresent();
        assertThat(nf.chain(Table.FILTER, "INPUT").orElseThrow()).contains("-A INPUT " + FOREIGN);
    }

    @Test
    void anEndpointChangeTouchesOnlyItsServiceChains() throws Exception {
        History h = new History(200);
        h.moveEndpoint(17, 1);
        RestorePlan plan = RestorePlan.between(rules(h, 1), rules(h, 2));
        assertThat(plan.script()).doesNotContain("KUBE-SERVICES").doesNotContain("KUBE-NODEPORTS");
        assertThat(plan.rewritten().get(Table.NAT))
                .allMatch(c -> c.startsWith("KUBE-SVC-") || c.startsWith("KUBE-SEP-"));
        assertThat(plan.removed().get(Table.NAT)).hasSize(1).allMatch(c -> c.startsWith("KUBE-SEP-"));
    }

    @Test
    void addingAServiceInsertsSingleDispatchRules() throws Exception {
        History h = new History(200);
        RulesDelta d = h.next(
                new Random(1) {
                    @Override
                    public int nextInt(int bound) {
                        return 0; // op 0: add a Service
                    }
                },
                1);
        RestorePlan plan = RestorePlan.between(rules(h, 1), rules(h, 2));
        assertThat(plan.script().lines().filter(l -> l.contains("KUBE-SERVICES")))
                .allMatch(l -> l.startsWith("-I KUBE-SERVICES "));
        assertThat(plan.script()).doesNotContain(":KUBE-SERVICES");
        assertThat(plan.lines()).isLessThan(20);
        MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        nf.restore(RestorePlan.full(rules(h, 1), List.of(), List.of()).script());
        nf.restore(plan.script());
        assertHolds(nf, rules(h, 2));
        assertThat(d.target()).isEqualTo(2);
    }

    @Test
    void aFullPlanRemovesStaleOwnedChainsOnly() throws Exception {
        History h = new History(20);
        MemoryNetfilter nf = new MemoryNetfilter(IpFamily.IPV4, null, "n");
        nf.restore(
                "*nat\n:KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]\n:MY-CHAIN - [0:0]\n-A KUBE-SEP-AAAAAAAAAAAAAAAA -j RETURN\nCOMMIT\n");
        List<RestorePlan.TableChain> stale = nf.chainNames(Table.NAT).stream()
                .filter(c -> OwnedChains.owns(Table.NAT, c))
                .map(c -> new RestorePlan.TableChain(Table.NAT, c))
                .toList();
        nf.restore(
                RestorePlan.full(rules(h, 1), List.of(new RestorePlan.TableChain(Table.NAT, OwnedChains.CANARY)), stale)
                        .script());
        assertHolds(nf, rules(h, 1));
        assertThat(nf.chainNames(Table.NAT))
                .contains("MY-CHAIN", OwnedChains.CANARY)
                .doesNotContain("KUBE-SEP-AAAAAAAAAAAAAAAA");
    }
}
