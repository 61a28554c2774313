package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.Agent;
import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.mode.IpvsMode;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.agent.state.StateFile;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.agent.testing.History;
import io.rulesync.exec.CommandRunner;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import io.rulesync.testsupport.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in IPVS mode, in a node's network namespace: ipsets, iptables rules and the addresses of kube-ipvs0 are
 * programmed for real, and the IPVS table is the subclass's: {@link MemoryIpvs} on this host, whose kernel has no IPVS
 * ({@link IpvsModeAgentTest}); the real one in the kernel lab's VM ({@link IpvsModeVmTest}). The versions come from the
 * real compiler; the same scenarios hold on both.
 */
abstract class IpvsModeContract {
    @TempDir
    Path dir;

    History history;
    /** Full listings of the IPVS table: what the agent reads at start and at checks, not per version. */
    int fullListings;

    int settingsSet;
    /** Every IPVS command the agent ran, in order. */
    final List<IpvsCommand> applied = new ArrayList<>();

    List<NodeAck> acks;
    AgentLogs logs;
    MutableClock clock;

    /** A runner in the node's namespace, made for this test (with kube-ipvs0 in it). */
    abstract CommandRunner node();

    /** The IPVS table the agent programs, of the node's namespace. */
    abstract IpvsKernel table();

    @BeforeEach
    void setUpAgent() {
        history = new History(20);
        acks = new ArrayList<>();
        logs = new AgentLogs();
        clock = new MutableClock();
    }

    @AfterEach
    void closeLogs() {
        logs.close();
    }

    /** Runs a command in the node's namespace, which must succeed. */
    CommandRunner.Result run(String... argv) throws Exception {
        CommandRunner.Result r = node().run(List.of(argv), null, Duration.ofSeconds(20));
        assertThat(r.ok()).as(String.join(" ", argv) + ": " + r.stderr()).isTrue();
        return r;
    }

    /** The virtual servers the table holds. */
    List<ServiceId> serviceIds() throws Exception {
        return table().list().stream().map(KernelVirtualServer::service).toList();
    }

    Agent agent() {
        return agent(true, dir);
    }

    /** An agent of this namespace in IPVS mode, or in iptables mode. */
    Agent agent(boolean ipvsMode, Path stateDir) {
        SnapshotSource snapshots = history.snapshots();
        IptablesNetfilter.Printer printer = IptablesNetfilter.Printer.KERNEL_FORM;
        CommandRunner inNs = node();
        List<Netfilter> nf = List.of(new IptablesNetfilter(IpFamily.IPV4, inNs, printer));
        Conntrack conntrack = new Conntrack(inNs, true);
        IpvsKernel counting = new IpvsKernel() {
            @Override
            public void prepare() throws IpvsApplyException {
                settingsSet++;
                table().prepare();
            }

            @Override
            public List<KernelVirtualServer> list() throws IpvsApplyException {
                fullListings++;
                return table().list();
            }

            @Override
            public List<KernelVirtualServer> list(java.util.Collection<ServiceId> services) throws IpvsApplyException {
                return table().list(services); // not counted: this is the per-version read
            }

            @Override
            public void run(List<IpvsCommand> commands) throws IpvsApplyException {
                applied.addAll(commands);
                table().run(commands);
            }
        };
        KernelMode mode = ipvsMode
                ? new IpvsMode(
                        History.NODE,
                        new IpvsApplier(
                                nf,
                                counting,
                                new IpsetSync(inNs),
                                new BoundAddresses(inNs),
                                Duration.ofMinutes(15),
                                List.of(io.rulesync.model.cluster.Cidr.parse(KEEPALIVED.address() + "/32"))),
                        conntrack,
                        clock)
                : new IptablesMode(History.NODE, new Applier(nf, null, clock), conntrack, Duration.ofSeconds(30), 100);
        return new Agent(
                History.CLUSTER,
                History.NODE,
                snapshots,
                mode,
                acks::add,
                new StateFile(stateDir, History.CLUSTER, History.NODE),
                clock,
                Duration.ofSeconds(30));
    }

    IpvsRules expected(long v) {
        return history.rules(v).ipvs(History.NODE, IpFamily.IPV4).orElseThrow();
    }

    /** The kernel holds version v: sets, addresses and, for IPVS, every desired server with weight 1 (drained ones may linger at 0). */
    void assertKernelHolds(long v) throws Exception {
        IpvsRules want = expected(v);
        Map<String, SortedSet<String>> sets = new TreeMap<>();
        for (String line : run("ipset", "save").stdout().split("\n")) {
            String[] f = line.split(" ");
            if (f[0].equals("create")) {
                sets.put(f[1], new TreeSet<>());
            } else if (f[0].equals("add")) {
                sets.get(f[1]).add(f[2]);
            }
        }
        for (IpvsSet s : IpvsSet.values()) {
            assertThat(sets.get(s.name(IpFamily.IPV4)))
                    .as("version %d set %s", v, s)
                    .isEqualTo(want.sets().get(s));
        }
        String nat = run("iptables", "-t", "nat", "-S", "KUBE-SERVICES").stdout();
        assertThat(nat).contains("-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN", "--match-set KUBE-CLUSTER-IP");
        String input = run("iptables", "-S", "INPUT").stdout();
        assertThat(input)
                .contains("-j KUBE-IPVS-FILTER")
                .contains("-j KUBE-PROXY-FIREWALL")
                .contains("-j KUBE-NODE-PORT");
        assertThat(new BoundAddresses(node()).list().keySet())
                .as("version %d addresses", v)
                .containsExactlyElementsOf(want.bound());

        Map<ServiceId, List<String>> have = new TreeMap<>();
        for (KernelVirtualServer k : table().list()) {
            if (!k.service().equals(KEEPALIVED)) {
                have.put(
                        k.service(),
                        k.realServers().stream()
                                .filter(r -> r.weight() > 0)
                                .map(KernelRealServer::text)
                                .sorted()
                                .toList());
            }
        }
        Map<ServiceId, List<String>> wantServers = new TreeMap<>();
        for (VirtualServer vs : want.virtualServers()) {
            wantServers.put(
                    ServiceId.of(vs),
                    vs.realServers().stream().map(RealServer::text).sorted().toList());
        }
        assertThat(have).as("version %d virtual servers", v).isEqualTo(wantServers);
    }

    /** Someone else's virtual server, in a range excluded with --ipvs-exclude-cidrs. */
    static final ServiceId KEEPALIVED =
            new ServiceId(IpAddress.parse("192.0.2.10"), 80, io.rulesync.model.cluster.Protocol.TCP);
    /** Someone else's, not excluded: removed, as kube-proxy removes every virtual server that is not its own. */
    static final ServiceId STRAY =
            new ServiceId(IpAddress.parse("198.51.100.7"), 80, io.rulesync.model.cluster.Protocol.TCP);

    @Test
    void appliesEveryVersionAcksIpvsAndRepairsDrift() throws Exception {
        for (ServiceId foreign : List.of(KEEPALIVED, STRAY)) {
            table().run(List.of(new IpvsCommand.AddService(new VirtualServer(
                    foreign.address(),
                    foreign.port(),
                    foreign.protocol(),
                    "wrr",
                    0,
                    List.of(new RealServer(IpAddress.parse("192.0.2.20"), 80, 1))))));
        }
        Agent a = agent();
        a.start();
        assertThat(serviceIds()).contains(KEEPALIVED).doesNotContain(STRAY);
        assertThat(acks.get(acks.size() - 1))
                .as("%s", acks.get(acks.size() - 1))
                .extracting(NodeAck::version, NodeAck::status, NodeAck::mode)
                .containsExactly(1L, NodeAck.Status.APPLIED, "ipvs");
        assertThat(expected(1).virtualServers())
                .hasSizeGreaterThan(20); // NodePorts too: the node's address × each NodePort
        assertKernelHolds(1);

        assertThat(fullListings).isEqualTo(1);
        assertThat(settingsSet)
                .as("kube-proxy's IPVS settings, set at the apply that read the kernel")
                .isEqualTo(1);
        Random r = new Random(7);
        for (int i = 0; i < 6; i++) {
            a.onDeltas(List.of(history.next(r, 3)));
            assertThat(acks.get(acks.size() - 1))
                    .extracting(NodeAck::version, NodeAck::status)
                    .containsExactly(history.latest(), NodeAck.Status.APPLIED);
            assertKernelHolds(history.latest());
        }

        // Versions read only the virtual servers they change, and leave the settings alone.
        assertThat(fullListings).isEqualTo(1);
        assertThat(settingsSet).isEqualTo(1);

        // Drift: a set member, a virtual server and a bound address go missing behind the agent's back.
        IpvsRules want = expected(history.latest());
        String member = want.sets().get(IpvsSet.CLUSTER_IP).first();
        run("ipset", "del", IpvsSet.CLUSTER_IP.name(IpFamily.IPV4), member);
        VirtualServer gone = want.virtualServers().get(0);
        table().run(List.of(new IpvsCommand.DeleteService(ServiceId.of(gone))));
        table().run(List.of(new IpvsCommand.AddService(
                new VirtualServer(STRAY.address(), STRAY.port(), STRAY.protocol(), "wrr", 0, List.of()))));
        IpAddress unbound = want.bound().first();
        run("ip", "addr", "del", unbound + "/32", "dev", BoundAddresses.DEVICE);
        long repairs = a.repairs();
        clock.advance(Duration.ofSeconds(31));
        a.tick();
        assertThat(a.repairs() - repairs).isGreaterThanOrEqualTo(4);
        assertKernelHolds(history.latest());
        assertThat(logs.lines()).anyMatch(l -> l.startsWith("drift repaired"));
        assertThat(serviceIds()).contains(KEEPALIVED).doesNotContain(STRAY);

        // A restarted agent compares with what the kernel holds: nothing to change, so live connections are never cut.
        int before = applied.size();
        agent().start();
        assertThat(applied).hasSize(before);
        assertThat(logs.lines().get(logs.lines().size() - 1))
                .startsWith("applied version " + history.latest() + " (0 changes");
    }

    /** The KUBE- chains of a table in the namespace. */
    List<String> chains(String table) throws Exception {
        return run("iptables", "-t", table, "-S")
                .stdout()
                .lines()
                .filter(l -> l.startsWith("-N KUBE-"))
                .map(l -> l.substring(3))
                .toList();
    }

    /** The targets of a built-in chain's KUBE- jumps, in order. */
    List<String> jumps(String table, String builtin) throws Exception {
        return run("iptables", "-t", table, "-S", builtin)
                .stdout()
                .lines()
                .filter(l -> l.contains("-j KUBE-"))
                .map(l -> l.substring(l.lastIndexOf("-j ") + 3))
                .toList();
    }
}
