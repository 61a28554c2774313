package io.rulesync.agent.apply;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.agent.testing.History;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testsupport.netns.NetnsLab;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The applier on the real kernel (iptables-nft in a network namespace the test creates): full and
 * incremental applies hold exactly the compiled rules as {@code iptables -S} prints them, other
 * software's rules survive, jumps exist once, drift is found and repaired.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresNetns
class KernelApplyTest {
    private static final String ADMIN_RULE = "-A INPUT -s 198.51.100.7/32 -j ADMIN-AUDIT";

    private NetnsLab lab;
    private IptablesNetfilter nf;
    private final List<String> log = new ArrayList<>();

    @BeforeAll
    void lab() {
        lab = new NetnsLab(0);
        nf = new IptablesNetfilter(
                IpFamily.IPV4, HostCommand.PROCESSES.inNetns(lab.nodeNs()), IptablesNetfilter.Printer.KERNEL_FORM);
    }

    @AfterAll
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    private RuleSet rules(History h, long v) {
        return h.rules(v).ruleSet(History.NODE, IpFamily.IPV4).orElseThrow();
    }

    private void assertKernelHolds(RuleSet expected) {
        for (Table t : Table.values()) {
            for (Chain c : expected.chains(t)) {
                assertThat(Applier.compare(nf, t, c)).as("%s %s", t, c.name()).isNull();
            }
            List<String> owned = nf.chainNames(t).stream()
                    .filter(c -> OwnedChains.owns(t, c) && !c.equals(OwnedChains.CANARY))
                    .toList();
            assertThat(owned)
                    .containsExactlyInAnyOrderElementsOf(
                            expected.chains(t).stream().map(Chain::name).toList());
        }
    }

    @Test
    void appliesVersionAfterVersionAndLeavesOthersAlone() throws Exception {
        lab.exec(lab.nodeNs(), "iptables", "-N", "ADMIN-AUDIT").orThrow();
        lab.exec(lab.nodeNs(), "iptables", "-A", "ADMIN-AUDIT", "-j", "RETURN").orThrow();
        lab.exec(lab.nodeNs(), "iptables", "-A", "INPUT", "-s", "198.51.100.7", "-j", "ADMIN-AUDIT")
                .orThrow();
        // A stale chain of an earlier kube-proxy: owned, so a full apply removes it.
        lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-N", "KUBE-SEP-AAAAAAAAAAAAAAAA")
                .orThrow();

        History h = new History(25);
        Applier applier = new Applier(List.of(nf));
        Applier.Outcome full = applier.apply(null, Map.of(IpFamily.IPV4, rules(h, 1)));
        assertThat(full.error()).isNull();
        assertKernelHolds(rules(h, 1));
        assertThat(nf.chain(Table.NAT, "KUBE-SEP-AAAAAAAAAAAAAAAA")).isEmpty();

        Random r = new Random(11);
        for (int step = 0; step < 6; step++) {
            long v = h.latest();
            h.next(r, 1 + r.nextInt(3));
            Applier.Outcome o =
                    applier.apply(Map.of(IpFamily.IPV4, rules(h, v)), Map.of(IpFamily.IPV4, rules(h, v + 1)));
            assertThat(o.error()).as("step %d", step).isNull();
            assertKernelHolds(rules(h, v + 1));
        }
        assertThat(nf.chain(Table.FILTER, "INPUT").orElseThrow())
                .contains(ADMIN_RULE)
                .filteredOn(l -> l.endsWith("-j KUBE-FIREWALL"))
                .hasSize(1);
        assertThat(nf.chain(Table.FILTER, "ADMIN-AUDIT").orElseThrow())
                .containsExactly("-N ADMIN-AUDIT", "-A ADMIN-AUDIT -j RETURN");
        assertThat(nf.chain(Table.NAT, "PREROUTING").orElseThrow())
                .filteredOn(l -> l.endsWith("-j KUBE-SERVICES"))
                .hasSize(1);

        // A full load over what the kernel holds (as after a restart without state), in small batches.
        RuleSet older = rules(h, 2);
        List<RestorePlan.TableChain> stale = new ArrayList<>();
        for (Table t : Table.values()) {
            nf.chainNames(t).stream()
                    .filter(c -> OwnedChains.owns(t, c))
                    .forEach(c -> stale.add(new RestorePlan.TableChain(t, c)));
        }
        List<String> batches = FullLoad.scripts(nf, older, stale, 200);
        assertThat(batches).hasSizeGreaterThan(3);
        for (String b : batches) {
            nf.restore(b);
        }
        assertKernelHolds(older);
        applier.apply(Map.of(IpFamily.IPV4, older), Map.of(IpFamily.IPV4, rules(h, h.latest())));

        // Drift: a rule appended to a service chain, a doubled jump. Found, repaired, and the next check is clean.
        RuleSet now = rules(h, h.latest());
        Chain svc = now.nat().stream()
                .filter(c -> c.name().startsWith("KUBE-SVC-"))
                .findFirst()
                .orElseThrow();
        lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-A", svc.name(), "-j", "RETURN")
                .orThrow();
        lab.exec(
                        lab.nodeNs(),
                        "iptables",
                        "-t",
                        "nat",
                        "-I",
                        "OUTPUT",
                        "-m",
                        "comment",
                        "--comment",
                        "kubernetes service portals",
                        "-j",
                        "KUBE-SERVICES")
                .orThrow();
        DriftCheck check = new DriftCheck(100_000);
        DriftCheck.Result found = check.check(applier, Map.of(IpFamily.IPV4, now));
        assertThat(found.repaired()).isEqualTo(2);
        assertThat(found.problems()).anyMatch(p -> p.contains(svc.name()));
        assertThat(check.check(applier, Map.of(IpFamily.IPV4, now)).problems()).isEmpty();
        assertKernelHolds(now);
        assertThat(nf.chain(Table.NAT, "OUTPUT").orElseThrow())
                .filteredOn(l -> l.endsWith("-j KUBE-SERVICES"))
                .hasSize(1);
    }

    @Test
    void aRefusedRestoreChangesNothing() throws Exception {
        History h = new History(10);
        Applier applier = new Applier(List.of(nf));
        assertThat(applier.apply(null, Map.of(IpFamily.IPV4, rules(h, 1))).error())
                .isNull();
        h.next(
                new Random(6) {
                    @Override
                    public int nextInt(int bound) {
                        return 1; // op 1: remove Service 1
                    }
                },
                1);
        RuleSet before = rules(h, 1);
        RuleSet after = rules(h, 2);
        String victim =
                before.nat().stream()
                        .filter(c -> c.name().equals("KUBE-SERVICES"))
                        .findFirst()
                        .orElseThrow()
                        .rules()
                        .stream()
                        .filter(r -> r.contains("ns1/svc1:"))
                        .findFirst()
                        .orElseThrow();
        List<String> goneChains = before.nat().stream()
                .map(Chain::name)
                .filter(n -> after.nat().stream().noneMatch(c -> c.name().equals(n)))
                .toList();
        assertThat(goneChains).isNotEmpty();
        // Someone removed a rule the next version deletes: iptables-restore refuses the whole transaction.
        lab.exec(lab.nodeNs(), "sh", "-c", "iptables -t nat -D KUBE-SERVICES " + victim)
                .orThrow();
        Applier.Outcome o = applier.apply(Map.of(IpFamily.IPV4, before), Map.of(IpFamily.IPV4, after));
        assertThat(o.error()).contains("iptables-restore").contains("-D KUBE-SERVICES");
        for (String c : goneChains) {
            assertThat(nf.chain(Table.NAT, c))
                    .as("%s still there: nothing of the refused restore was applied", c)
                    .isPresent();
        }
    }

    @Test
    void dualStackRulesGoToBothFamilies() throws Exception {
        ClusterSettings settings = new ClusterSettings(
                List.of(IpFamily.IPV4, IpFamily.IPV6),
                List.of(Cidr.parse("10.245.0.0/16"), Cidr.parse("fd00:245::/64")),
                false,
                14,
                List.of());
        ClusterRules edge = ClusterCompiler.compile(
                        ClusterManifests.load(List.of(Path.of("../examples/edge"))), settings)
                .rules();
        String node = edge.nodes().firstKey();
        IptablesNetfilter v6 = new IptablesNetfilter(
                IpFamily.IPV6, HostCommand.PROCESSES.inNetns(lab.nodeNs()), IptablesNetfilter.Printer.KERNEL_FORM);
        Applier applier = new Applier(List.of(nf, v6));
        Map<IpFamily, RuleSet> both = Map.of(
                IpFamily.IPV4,
                edge.ruleSet(node, IpFamily.IPV4).orElseThrow(),
                IpFamily.IPV6,
                edge.ruleSet(node, IpFamily.IPV6).orElseThrow());
        assertThat(applier.apply(null, both).error()).isNull();
        for (Map.Entry<IpFamily, RuleSet> e : both.entrySet()) {
            Netfilter n = applier.netfilter(e.getKey());
            for (Table t : Table.values()) {
                for (Chain c : e.getValue().chains(t)) {
                    assertThat(Applier.compare(n, t, c))
                            .as("%s %s %s", e.getKey(), t, c.name())
                            .isNull();
                }
            }
        }
        assertThat(v6.chain(Table.NAT, "PREROUTING").orElseThrow())
                .filteredOn(l -> l.endsWith("-j KUBE-SERVICES"))
                .hasSize(1);
        assertThat(v6.chain(Table.NAT, "KUBE-SERVICES").orElseThrow()).anyMatch(l -> l.contains("/128"));
    }
}
