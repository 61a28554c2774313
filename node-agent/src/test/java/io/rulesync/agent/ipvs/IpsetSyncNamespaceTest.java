package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.plan.ipvs.IpsetPlan;
import io.rulesync.agent.plan.ipvs.IpsetPlanTest;
import io.rulesync.agent.plan.ipvs.SetMember;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IpsetSync} against the real ipset in a namespace of the test's own: sets created as
 * declared, changed sets swapped (also while an iptables rule matches them), equal sets not named,
 * no temporary set left, and a second sync of the same state changing nothing, which proves that
 * desired members and what ipset prints back compare alike.
 */
@RequiresNetns
@RequiresTool("ipset")
class IpsetSyncNamespaceTest {
    private NetnsLab lab;
    private IpsetSync sync;

    @BeforeEach
    void lab() {
        lab = new NetnsLab(0);
        sync = new IpsetSync(HostCommand.PROCESSES.inNetns(lab.nodeNs()));
    }

    @AfterEach
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    static final IpvsRules FIRST = IpsetPlanTest.rules(
            IpFamily.IPV4,
            Map.of(
                    IpvsSet.LOOP_BACK, List.of("10.244.1.5,tcp:53,10.244.1.5", "10.244.1.5,udp:53,10.244.1.5"),
                    IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.10,udp:53", "10.96.0.20,sctp:3868"),
                    IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                            List.of("203.0.113.5,tcp:80,192.168.0.0/16", "203.0.113.5,tcp:80,10.1.2.3/32"),
                    IpvsSet.NODE_PORT_TCP, List.of("30080", "31000"),
                    IpvsSet.HEALTH_CHECK_NODE_PORT, List.of("32000"),
                    IpvsSet.IPVS_IPS, List.of("10.96.0.10", "10.96.0.20")));

    static final IpvsRules SECOND = IpsetPlanTest.rules(
            IpFamily.IPV4,
            Map.of(
                    IpvsSet.LOOP_BACK, List.of("10.244.1.5,tcp:53,10.244.1.5", "10.244.1.5,udp:53,10.244.1.5"),
                    IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.30,tcp:443"),
                    IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                            List.of("203.0.113.5,tcp:80,192.168.0.0/16", "203.0.113.5,tcp:80,10.1.2.3/32"),
                    IpvsSet.NODE_PORT_TCP, List.of("30080", "30443"),
                    IpvsSet.HEALTH_CHECK_NODE_PORT, List.of("32000"),
                    IpvsSet.IPVS_IPS, List.of("10.96.0.10", "10.96.0.30")));

    /** Every set of the namespace with its members as ipset prints them. */
    private Map<String, SortedSet<String>> saved() {
        Map<String, SortedSet<String>> out = new TreeMap<>();
        for (String line : lab.exec(lab.nodeNs(), "ipset", "save").orThrow().lines()) {
            String[] f = line.split(" ");
            if (f[0].equals("create")) {
                out.put(f[1], new TreeSet<>());
            } else if (f[0].equals("add")) {
                out.get(f[1]).add(f[2]);
            }
        }
        return out;
    }

    /** The namespace holds exactly the sets of {@code rules}' family with exactly its members, in ipset's printed form. */
    private void assertHolds(IpvsRules rules) {
        Map<String, SortedSet<String>> saved = saved();
        for (IpvsSet s : IpvsSet.values()) {
            SortedSet<String> want = new TreeSet<>();
            rules.sets().get(s).forEach(m -> want.add(SetMember.canonical(s.type(), m)));
            assertThat(saved.get(s.name(rules.family())))
                    .as(s.name(rules.family()))
                    .isEqualTo(want);
        }
        assertThat(saved.keySet()).noneMatch(n -> n.startsWith("RSYNC-TMP-"));
    }

    /** Whether the script names the set (as a whole word: KUBE-NODE-PORT-TCP is not KUBE-NODE-PORT-LOCAL-TCP). */
    private static boolean names(IpsetPlan plan, String set) {
        return plan.script().lines().anyMatch(l -> Arrays.asList(l.split(" ")).contains(set));
    }

    @Test
    void createsThenSwapsOnlyWhatChanged() throws Exception {
        IpsetPlan first = sync.sync(FIRST);
        assertThat(first.created()).hasSize(IpvsSet.values().length);
        assertHolds(FIRST);
        System.out.println("IpsetSyncNamespaceTest: ipset printed back:\n"
                + lab.exec(lab.nodeNs(), "ipset", "save")
                        .orThrow()
                        .stdout()
                        .lines()
                        .filter(l -> l.startsWith("add ") || l.contains("SOURCE-CIDR") || l.contains("NODE-PORT-TCP "))
                        .map(l -> "  " + l)
                        .reduce((a, b) -> a + "\n" + b)
                        .orElse(""));
        assertThat(sync.sync(FIRST).isEmpty()).as("the same state again").isTrue();

        // A rule matches the set while it is replaced: a swap keeps it working (a destroy would be refused).
        lab.exec(
                        lab.nodeNs(),
                        "iptables",
                        "-A",
                        "INPUT",
                        "-m",
                        "set",
                        "--match-set",
                        "KUBE-CLUSTER-IP",
                        "dst,dst",
                        "-j",
                        "ACCEPT")
                .orThrow();
        IpsetPlan second = sync.sync(SECOND);
        assertThat(second.swapped()).containsExactly("KUBE-CLUSTER-IP", "KUBE-NODE-PORT-TCP", "KUBE-IPVS-IPS");
        assertThat(second.created()).isEmpty();
        assertThat(second.untouched()).hasSize(IpvsSet.values().length - 3);
        for (String untouched : second.untouched()) {
            assertThat(names(second, untouched)).as(untouched + " is not named").isFalse();
        }
        assertHolds(SECOND);
        assertThat(lab.exec(lab.nodeNs(), "iptables", "-S", "INPUT").orThrow().stdout())
                .contains("--match-set KUBE-CLUSTER-IP dst,dst");
        assertThat(sync.sync(SECOND).isEmpty()).isTrue();
    }

    @Test
    void ipv6SetsInOtherSpellingsConverge() throws Exception {
        IpvsRules v6 = IpsetPlanTest.rules(
                IpFamily.IPV6,
                Map.of(
                        IpvsSet.LOOP_BACK, List.of("fd00:10:244::5,sctp:3868,fd00:10:244:0:0:0:0:5"),
                        IpvsSet.CLUSTER_IP, List.of("FD00:10:96::20,tcp:3868", "fd00:10:96::20,80"),
                        IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                                List.of("2001:db8::20,tcp:80,2001:db8:1::/48", "2001:db8::20,tcp:80,2001:db8:2::5/128"),
                        IpvsSet.NODE_PORT_TCP, List.of("31869"),
                        IpvsSet.IPVS_IPS, List.of("fd00:10:96::20", "::ffff:10.0.0.1")));
        sync.sync(FIRST); // the IPv4 sets beside them are not the IPv6 sync's business
        IpsetPlan first = sync.sync(v6);
        assertThat(first.created())
                .containsExactlyElementsOf(Arrays.stream(IpvsSet.values())
                        .map(s -> s.name(IpFamily.IPV6))
                        .toList());
        assertHolds(v6);
        assertHolds(FIRST);
        System.out.println("IpsetSyncNamespaceTest: ipset printed back (IPv6):\n"
                + lab.exec(lab.nodeNs(), "ipset", "save")
                        .orThrow()
                        .stdout()
                        .lines()
                        .filter(l -> l.startsWith("add KUBE-6-"))
                        .map(l -> "  " + l)
                        .reduce((a, b) -> a + "\n" + b)
                        .orElse(""));
        assertThat(sync.sync(v6).isEmpty()).as("canonical forms compare equal").isTrue();
        assertThat(sync.sync(FIRST).isEmpty()).isTrue();
    }

    @Test
    void aNewVersionPatchesSmallChangesWithoutReadingTheKernel() throws Exception {
        sync.sync(FIRST);
        lab.exec(
                        lab.nodeNs(),
                        "iptables",
                        "-A",
                        "INPUT",
                        "-m",
                        "set",
                        "--match-set",
                        "KUBE-LOOP-BACK",
                        "dst,dst,src",
                        "-j",
                        "ACCEPT")
                .orThrow();
        IpvsRules third = IpsetPlanTest.rules(
                IpFamily.IPV4,
                Map.of(
                        IpvsSet.LOOP_BACK,
                                List.of(
                                        "10.244.1.5,tcp:53,10.244.1.5",
                                        "10.244.1.5,udp:53,10.244.1.5",
                                        "10.244.1.6,tcp:80,10.244.1.6"),
                        IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.10,udp:53", "10.96.0.20,sctp:3868"),
                        IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                                List.of("203.0.113.5,tcp:80,192.168.0.0/16", "203.0.113.5,tcp:80,10.1.2.3/32"),
                        IpvsSet.NODE_PORT_TCP, List.of("30080", "31000"),
                        IpvsSet.HEALTH_CHECK_NODE_PORT, List.of("32000"),
                        IpvsSet.IPVS_IPS, List.of("10.96.0.10", "10.96.0.20")));
        IpsetPlan plan = sync.update(FIRST, third);
        assertThat(plan.patched()).containsExactly("KUBE-LOOP-BACK");
        assertThat(plan.script()).isEqualTo("add KUBE-LOOP-BACK 10.244.1.6,tcp:80,10.244.1.6 -exist\n");
        assertHolds(third);
        // The kernel agrees: a check finds nothing to do; and the way back is a patch too.
        assertThat(sync.sync(third).isEmpty()).isTrue();
        assertThat(sync.update(third, FIRST).patched()).containsExactly("KUBE-LOOP-BACK");
        assertHolds(FIRST);
    }

    @Test
    void repairsHeadersTypesAndLeftovers() throws Exception {
        // What an older or interrupted run might leave: a bitmap of a narrower range, a set of the
        // wrong type, a temporary set, and a set that is not IPVS mode's.
        lab.execWithInput(lab.nodeNs(), """
                create KUBE-NODE-PORT-TCP bitmap:port range 30000-32767
                add KUBE-NODE-PORT-TCP 30080
                create KUBE-IPVS-IPS hash:net family inet hashsize 1024 maxelem 65536
                add KUBE-IPVS-IPS 10.96.0.0/24
                create RSYNC-TMP-4-5 hash:ip family inet hashsize 1024 maxelem 65536
                create SOMEONE-ELSE hash:ip family inet hashsize 1024 maxelem 65536
                add SOMEONE-ELSE 192.0.2.1
                """, "ipset", "restore").orThrow();
        IpsetPlan plan = sync.sync(FIRST);
        assertThat(plan.swapped()).containsExactly("KUBE-NODE-PORT-TCP");
        assertThat(plan.recreated()).containsExactly("KUBE-IPVS-IPS");
        assertThat(plan.leftovers()).containsExactly("RSYNC-TMP-4-5");
        assertHolds(FIRST);
        assertThat(lab.exec(lab.nodeNs(), "ipset", "save", "KUBE-NODE-PORT-TCP")
                        .orThrow()
                        .stdout())
                .startsWith("create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\n");
        assertThat(lab.exec(lab.nodeNs(), "ipset", "save", "KUBE-IPVS-IPS")
                        .orThrow()
                        .stdout())
                .startsWith("create KUBE-IPVS-IPS hash:ip family inet ");
        assertThat(saved().get("SOMEONE-ELSE")).containsExactly("192.0.2.1");
    }

    @Test
    void aRefusedLineIsNamed() {
        // A set of the wrong type that a rule still references cannot be recreated: the kernel says why, and which line
        // it was.
        lab.execWithInput(
                        lab.nodeNs(),
                        "create KUBE-IPVS-IPS hash:net family inet hashsize 1024 maxelem 65536\n",
                        "ipset",
                        "restore")
                .orThrow();
        lab.exec(
                        lab.nodeNs(),
                        "iptables",
                        "-A",
                        "INPUT",
                        "-m",
                        "set",
                        "--match-set",
                        "KUBE-IPVS-IPS",
                        "dst",
                        "-j",
                        "ACCEPT")
                .orThrow();
        assertThatThrownBy(() -> sync.sync(FIRST)).isInstanceOfSatisfying(IpvsApplyException.class, e -> {
            assertThat(e.failures()).singleElement().satisfies(f -> {
                assertThat(f.command()).isEqualTo("destroy KUBE-IPVS-IPS");
                assertThat(f.reason()).contains("in use by a kernel component");
            });
            System.out.println("IpsetSyncNamespaceTest: " + e.getMessage());
        });
    }
}
