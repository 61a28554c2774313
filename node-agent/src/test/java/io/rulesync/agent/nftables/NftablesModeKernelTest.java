package io.rulesync.agent.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.Agent;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.agent.testing.History;
import io.rulesync.agent.testing.OneVersionAgent;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.netns.NetnsLab;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in nftables mode on this kernel, with the real {@code nft}: versions of the real compiler applied as a full
 * load and then as partial transactions, each leaving exactly what a fresh load of the same version leaves; drift
 * repaired; a restart; someone else's table left alone; and real connections to a ClusterIP following an edit.
 */
@RequiresNetns
@RequiresTool({"nft", "iptables-restore", "iptables-save"})
class NftablesModeKernelTest {
    private static final String FOREIGN = """
            add table inet foreign
            add chain inet foreign input { type filter hook input priority 0 ; }
            add rule inet foreign input tcp dport 9 counter accept
            """;

    @TempDir
    Path dir;

    private final List<String> namespaces = new ArrayList<>();
    private final AgentLogs logs = new AgentLogs();
    private final List<NodeAck> acks = new ArrayList<>();

    @BeforeEach
    void namespaces() throws Exception {
        for (String role : List.of("node", "fresh")) {
            String ns = "rs-nft-" + role + "-" + UUID.randomUUID().toString().substring(0, 8);
            run(List.of("ip", "netns", "add", ns), null);
            namespaces.add(ns);
        }
    }

    @AfterEach
    void close() throws Exception {
        logs.close();
        for (String ns : namespaces) {
            HostCommand.PROCESSES.run(List.of("ip", "netns", "delete", ns), null, Duration.ofSeconds(10));
        }
    }

    @Test
    void deltasLeaveWhatAFullLoadLeavesAndDriftIsRepaired() throws Exception {
        String node = namespaces.get(0);
        String fresh = namespaces.get(1);
        History history = new History(30);
        run(List.of("ip", "netns", "exec", node, "nft", "-f", "-"), FOREIGN);
        String foreign = foreign(node);

        Agent agent = agent(node, history);
        agent.start();
        assertThat(acks).last().satisfies(a -> {
            assertThat(a.status()).isEqualTo(NodeAck.Status.APPLIED);
            assertThat(a.mode()).isEqualTo("nftables");
        });
        assertSameAsFreshLoad(node, fresh, history.rules(1));

        Random r = new Random(34);
        for (int step = 0; step < 6; step++) {
            agent.onDeltas(List.of(history.next(r, 3)));
            assertThat(acks)
                    .last()
                    .satisfies(a -> assertThat(a.status()).as(a.error()).isEqualTo(NodeAck.Status.APPLIED));
            assertThat(acks.get(acks.size() - 1).running()).isEqualTo(history.latest());
            assertSameAsFreshLoad(node, fresh, history.rules(history.latest()));
        }
        // The first apply loaded the table whole; each delta was a partial transaction.
        List<String> applied = logs.lines().stream()
                .filter(l -> l.startsWith("applied version "))
                .toList();
        assertThat(applied).hasSize(7);
        assertThat(applied.get(0)).startsWith("applied version 1 (full, ");
        assertThat(applied.subList(1, 7)).allMatch(l -> l.matches("applied version \\d+ \\(\\d+ operations, .*"));
        // Removals end in a transaction of chain deletions, which went as netlink messages (and left what nft would).
        assertThat(applied).anyMatch(l -> l.matches(".*operations, \\d+ transactions by netlink.*"));

        // Drift: a chain emptied and a map element deleted by hand. The check finds both and replaces the table.
        String chain = listing(node).stream()
                .filter(l -> l.startsWith("chain service-"))
                .findFirst()
                .orElseThrow()
                .replace("chain ", "")
                .replace(" {", "");
        run(List.of("ip", "netns", "exec", node, "nft", "flush", "chain", "ip", "kube-proxy", chain), null);
        assertThat(agent.verify().problems())
                .anyMatch(p -> p.equals("ipv4: chain " + chain + " has 0 rules, not 2")
                        || p.startsWith("ipv4: chain " + chain + " has 0 rules"));
        assertSameAsFreshLoad(node, fresh, history.rules(history.latest()));
        assertThat(logs.lines()).anyMatch(l -> l.startsWith("drift: ipv4: chain " + chain + " has 0 rules"));
        run(List.of("ip", "netns", "exec", node, "nft", "add", "chain", "ip", "kube-proxy", "intruder"), null);
        assertThat(agent.verify().problems()).containsExactly("ipv4: chain intruder is not the version's");
        assertSameAsFreshLoad(node, fresh, history.rules(history.latest()));
        assertThat(agent.verify().problems()).isEmpty();

        // A restart: the new process replaces the table whole, and leaves it as the version has it.
        acks.clear();
        agent(node, history).start();
        assertThat(acks).singleElement().satisfies(a -> assertThat(a.status()).isEqualTo(NodeAck.Status.APPLIED));
        assertSameAsFreshLoad(node, fresh, history.rules(history.latest()));
        assertThat(foreign(node)).isEqualTo(foreign);
    }

    @Test
    void aNodeThatChangesModeKeepsOnlyTheNewModesRules() throws Exception {
        String node = namespaces.get(0);
        History history = new History(5);
        agent(node, history, ProxyMode.IPTABLES).start();
        assertThat(iptablesSave(node)).contains(":KUBE-SERVICES").contains("-j KUBE-SERVICES");

        // To nftables mode: iptables mode's chains and jumps go, or its DNAT would answer first.
        agent(node, history, ProxyMode.NFTABLES).start();
        assertThat(iptablesSave(node)).doesNotContain("KUBE-");
        assertSameAsFreshLoad(node, namespaces.get(1), history.rules(1));
        assertThat(logs.lines())
                .anyMatch(l -> l.matches("ipv4: removed \\d+ chains and jumps iptables or IPVS mode had left"));

        // And back: the kube-proxy table goes.
        agent(node, history, ProxyMode.IPTABLES).start();
        assertThat(run(List.of("ip", "netns", "exec", node, "nft", "list", "tables"), null)
                        .stdout())
                .doesNotContain("kube-proxy");
        assertThat(iptablesSave(node)).contains(":KUBE-SERVICES");
        assertThat(acks).allSatisfy(a -> assertThat(a.status()).as(a.error()).isEqualTo(NodeAck.Status.APPLIED));
    }

    private static String iptablesSave(String ns) throws Exception {
        return run(List.of("ip", "netns", "exec", ns, "iptables-save"), null).stdout();
    }

    @Test
    void connectionsToAClusterIpFollowAnEdit() throws Exception {
        try (NetnsLab lab = new NetnsLab(2)) {
            for (int pod = 0; pod < 2; pod++) {
                lab.serve(pod, "tcp", 8080, "pod" + pod);
            }
            ClusterSettings settings = new ClusterSettings(
                    List.of(IpFamily.IPV4), List.of(Cidr.parse(lab.podCidrIPv4())), false, 14, List.of());
            ClusterHead.Step one = ClusterHead.empty("shop")
                    .apply(List.<ClusterEvent>of(
                            new SettingsChanged("shop", settings, Fixtures.T),
                            Fixtures.upsert("shop", Fixtures.node("node-a", lab.nodeIPv4())),
                            Fixtures.upsert("shop", Fixtures.service("web", "10.96.0.10")),
                            Fixtures.upsert("shop", Fixtures.slice("web", "node-a", lab.podIPv4(0), lab.podIPv4(1)))));
            ClusterRules v1 = one.next().published();
            ClusterHead.Step two =
                    one.next().apply(List.of(Fixtures.upsert("shop", Fixtures.slice("web", "node-a", lab.podIPv4(0)))));
            SnapshotSource snapshots = new SnapshotSource() {
                @Override
                public RulesSnapshot latest(String cluster, String node) {
                    return at(cluster, node, 1);
                }

                @Override
                public RulesSnapshot at(String cluster, String node, long version) {
                    return new RulesSnapshot("shop", 1, Fixtures.T, v1.forNode(node));
                }
            };
            Agent agent = config("shop", "node-a")
                    .agent(snapshots, acks::add, HostCommand.PROCESSES.inNetns(lab.nodeNs()), new MutableClock());
            agent.start();
            assertThat(answering(lab)).containsExactly("pod0", "pod1");

            agent.onDeltas(List.of(new RulesDelta("shop", 1, 2, Fixtures.T, two.diff())));
            assertThat(acks).last().satisfies(a -> {
                assertThat(a.status()).as(a.error()).isEqualTo(NodeAck.Status.APPLIED);
                assertThat(a.running()).isEqualTo(2);
            });
            assertThat(answering(lab)).containsExactly("pod0");
        }
    }

    /** A socket that cannot be opened (here: a namespace that is not there) leaves every transaction to nft, said once. */
    @Test
    void withoutANetlinkSocketEveryTransactionGoesToNft() throws Exception {
        String node = namespaces.get(0);
        NftTransaction table =
                new History(5).rules(1).nftables(History.NODE, IpFamily.IPV4).orElseThrow();
        run(List.of("ip", "netns", "exec", node, "nft", "-f", "-"), table.render());
        NftCommand command = new NftCommand(HostCommand.PROCESSES.inNetns(node), "rulesync-no-such-namespace", true);
        for (String chain : List.of("test-a", "test-b")) {
            NftTransaction add = new NftTransaction(IpFamily.IPV4, List.of(new NftOp.AddChain(chain)));
            assertThat(command.run(IpFamily.IPV4, List.of(NftKernel.Step.of(add)), table))
                    .isNull();
        }
        assertThat(command.sentByNetlink()).isZero();
        assertThat(listing(node)).contains("chain test-a {", "chain test-b {");
        assertThat(logs.lines())
                .filteredOn(l -> l.startsWith("nftables: no netlink socket"))
                .hasSize(1);
    }

    private Agent agent(String ns, History history) throws Exception {
        return agent(ns, history, ProxyMode.NFTABLES);
    }

    /** An agent whose transactions of chains and elements alone go as netlink messages, in the lab's namespace. */
    private Agent agent(String ns, History history, ProxyMode mode) throws Exception {
        SnapshotSource snapshots = history.snapshots();
        return config(History.CLUSTER, History.NODE, mode)
                .agent(snapshots, acks::add, HostCommand.PROCESSES.inNetns(ns), ns, new MutableClock());
    }

    private AgentConfig config(String cluster, String node) throws Exception {
        return config(cluster, node, ProxyMode.NFTABLES);
    }

    private AgentConfig config(String cluster, String node, ProxyMode mode) throws Exception {
        return OneVersionAgent.config(
                cluster, node, null, Files.createTempDirectory(dir, "state"), mode, WhenUnavailable.REFUSE);
    }

    /** The node's table, listed, against the same version loaded whole into an empty namespace. */
    private static void assertSameAsFreshLoad(String node, String fresh, ClusterRules version) throws Exception {
        String table =
                version.nftables(History.NODE, IpFamily.IPV4).orElseThrow().render();
        run(
                List.of("ip", "netns", "exec", fresh, "nft", "-f", "-"),
                "add table ip kube-proxy\ndelete table ip kube-proxy\n" + table);
        assertThat(listing(node)).isEqualTo(listing(fresh));
    }

    /** The table's lines, sorted: chains and elements are listed in the order they were made, which differs. */
    private static List<String> listing(String ns) throws Exception {
        return run(List.of("ip", "netns", "exec", ns, "nft", "-s", "list", "table", "ip", "kube-proxy"), null)
                .stdout()
                .lines()
                .map(String::strip)
                .flatMap(l -> Arrays.stream(l.split(", ")))
                .sorted()
                .toList();
    }

    private static String foreign(String ns) throws Exception {
        return run(List.of("ip", "netns", "exec", ns, "nft", "list", "table", "inet", "foreign"), null)
                .stdout();
    }

    private static Set<String> answering(NetnsLab lab) {
        Set<String> ids = new TreeSet<>();
        for (String line : lab.probe(lab.clientNs(), "tcp", "10.96.0.10", 80, 30, 2000)) {
            if (line.startsWith("OK ")) {
                ids.add(line.split(" ")[1]);
            }
        }
        return ids;
    }

    private static CommandRunner.Result run(List<String> argv, String stdin) throws Exception {
        CommandRunner.Result r = HostCommand.PROCESSES.run(argv, stdin, Duration.ofSeconds(60));
        assertThat(r.ok()).as(String.join(" ", argv) + ": " + r.stderr()).isTrue();
        return r;
    }
}
