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
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
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
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in IPVS mode, on this kernel: ipsets, iptables rules and the addresses of kube-ipvs0 are
 * programmed for real in a network namespace; the IPVS table is {@link MemoryIpvs}, because this
 * kernel has no IPVS ({@code IpvsadmKernelNamespaceTest} runs the real one where it exists). The
 * versions come from the real compiler.
 */
@RequiresNetns
@RequiresTool("ipset")
class IpvsModeAgentTest {
    @TempDir
    Path dir;

    String ns;
    History history;
    MemoryIpvs ipvs;
    /** Full listings of the IPVS table: what the agent reads at start and at checks, not per version. */
    int fullListings;

    List<NodeAck> acks;
    AgentLogs logs;
    MutableClock clock;

    @BeforeEach
    void setUp() throws Exception {
        ns = "rs-ipvsagent-" + UUID.randomUUID().toString().substring(0, 8);
        run("ip", "netns", "add", ns);
        // This kernel has no dummy driver; a veth named kube-ipvs0 holds addresses just the same.
        run(
                "ip",
                "netns",
                "exec",
                ns,
                "ip",
                "link",
                "add",
                BoundAddresses.DEVICE,
                "type",
                "veth",
                "peer",
                "name",
                "kipvs-peer");
        history = new History(20);
        ipvs = new MemoryIpvs();
        acks = new ArrayList<>();
        logs = new AgentLogs();
        clock = new MutableClock();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (ns != null) {
            HostCommand.PROCESSES.run(List.of("ip", "netns", "delete", ns), null, Duration.ofSeconds(10));
        }
        logs.close();
    }

    static CommandRunner.Result run(String... argv) throws Exception {
        CommandRunner.Result r = HostCommand.PROCESSES.run(List.of(argv), null, Duration.ofSeconds(20));
        assertThat(r.ok()).as(String.join(" ", argv) + ": " + r.stderr()).isTrue();
        return r;
    }

    Agent agent() {
        return agent(true, dir);
    }

    /** An agent of this namespace in IPVS mode, or in iptables mode. */
    Agent agent(boolean ipvsMode, Path stateDir) {
        SnapshotSource snapshots = history.snapshots();
        IptablesNetfilter.Printer printer = IptablesNetfilter.Printer.KERNEL_FORM;
        CommandRunner inNs = HostCommand.PROCESSES.inNetns(ns);
        List<Netfilter> nf = List.of(new IptablesNetfilter(IpFamily.IPV4, inNs, printer));
        Conntrack conntrack = new Conntrack(inNs, true);
        IpvsKernel counting = new IpvsKernel() {
            @Override
            public List<KernelVirtualServer> list() throws IpvsApplyException {
                fullListings++;
                return ipvs.list();
            }

            @Override
            public List<KernelVirtualServer> list(java.util.Collection<ServiceId> services) throws IpvsApplyException {
                return ipvs.list(services); // not counted: this is the per-version read
            }

            @Override
            public void run(List<IpvsCommand> commands) throws IpvsApplyException {
                ipvs.run(commands);
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
        for (String line :
                run("ip", "netns", "exec", ns, "ipset", "save").stdout().split("\n")) {
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
        String nat = run("ip", "netns", "exec", ns, "iptables", "-t", "nat", "-S", "KUBE-SERVICES")
                .stdout();
        assertThat(nat).contains("-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN", "--match-set KUBE-CLUSTER-IP");
        String input = run("ip", "netns", "exec", ns, "iptables", "-S", "INPUT").stdout();
        assertThat(input)
                .contains("-j KUBE-IPVS-FILTER")
                .contains("-j KUBE-PROXY-FIREWALL")
                .contains("-j KUBE-NODE-PORT");
        assertThat(new BoundAddresses(HostCommand.PROCESSES.inNetns(ns)).list().keySet())
                .as("version %d addresses", v)
                .containsExactlyElementsOf(want.bound());

        Map<ServiceId, List<String>> have = new TreeMap<>();
        for (KernelVirtualServer k : ipvs.list()) {
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
            ipvs.run(List.of(new IpvsCommand.AddService(new VirtualServer(
                    foreign.address(),
                    foreign.port(),
                    foreign.protocol(),
                    "wrr",
                    0,
                    List.of(new RealServer(IpAddress.parse("192.0.2.20"), 80, 1))))));
        }
        Agent a = agent();
        a.start();
        assertThat(ipvs.serviceIds()).contains(KEEPALIVED).doesNotContain(STRAY);
        assertThat(acks.get(acks.size() - 1))
                .extracting(NodeAck::version, NodeAck::status, NodeAck::mode)
                .containsExactly(1L, NodeAck.Status.APPLIED, "ipvs");
        assertThat(expected(1).virtualServers())
                .hasSizeGreaterThan(20); // NodePorts too: the node's address × each NodePort
        assertKernelHolds(1);

        assertThat(fullListings).isEqualTo(1);
        Random r = new Random(7);
        for (int i = 0; i < 6; i++) {
            a.onDeltas(List.of(history.next(r, 3)));
            assertThat(acks.get(acks.size() - 1))
                    .extracting(NodeAck::version, NodeAck::status)
                    .containsExactly(history.latest(), NodeAck.Status.APPLIED);
            assertKernelHolds(history.latest());
        }

        // Versions read only the virtual servers they change.
        assertThat(fullListings).isEqualTo(1);

        // Drift: a set member, a virtual server and a bound address go missing behind the agent's back.
        IpvsRules want = expected(history.latest());
        String member = want.sets().get(IpvsSet.CLUSTER_IP).first();
        run("ip", "netns", "exec", ns, "ipset", "del", IpvsSet.CLUSTER_IP.name(IpFamily.IPV4), member);
        VirtualServer gone = want.virtualServers().get(0);
        ipvs.run(List.of(new IpvsCommand.DeleteService(ServiceId.of(gone))));
        ipvs.run(List.of(new IpvsCommand.AddService(
                new VirtualServer(STRAY.address(), STRAY.port(), STRAY.protocol(), "wrr", 0, List.of()))));
        IpAddress unbound = want.bound().first();
        run("ip", "netns", "exec", ns, "ip", "addr", "del", unbound + "/32", "dev", BoundAddresses.DEVICE);
        long repairs = a.repairs();
        clock.advance(Duration.ofSeconds(31));
        a.tick();
        assertThat(a.repairs() - repairs).isGreaterThanOrEqualTo(4);
        assertKernelHolds(history.latest());
        assertThat(logs.lines()).anyMatch(l -> l.startsWith("drift repaired"));
        assertThat(ipvs.serviceIds()).contains(KEEPALIVED).doesNotContain(STRAY);

        // A restarted agent compares with what the kernel holds: nothing to change, so live connections are never cut.
        List<String> applied = ipvs.applied();
        int before = applied.size();
        agent().start();
        assertThat(ipvs.applied()).hasSize(before);
        assertThat(logs.lines().get(logs.lines().size() - 1))
                .startsWith("applied version " + history.latest() + " (0 changes");
    }

    @Test
    void removedTcpRealServersDrainUntilTheirConnectionsEndOrTheirDeadline() throws Exception {
        Agent a = agent();
        a.start();
        busyEverywhere();
        a.onDeltas(List.of(history.moveEndpoint(2, 7)));
        assertKernelHolds(history.latest());
        List<String> drained = drained();
        assertThat(drained)
                .as("moving Service 2's endpoints drains the old ones")
                .isNotEmpty();
        assertThat(a.draining()).isEqualTo(drained.size());

        // Still connected after the next looks: still there, at weight 0.
        clock.advance(Duration.ofSeconds(6));
        a.tick();
        assertThat(drained()).isEqualTo(drained);

        // Connections gone: deleted at the next look.
        for (KernelVirtualServer k : ipvs.list()) {
            for (KernelRealServer r : k.realServers()) {
                if (r.weight() == 0) {
                    ipvs.setConnections(k.service(), r.address(), r.port(), 0, 0);
                }
            }
        }
        clock.advance(Duration.ofSeconds(6));
        a.tick();
        assertThat(drained()).isEmpty();
        assertThat(logs.lines()).anyMatch(l -> l.startsWith("deleted " + drained.size() + " drained real servers"));
        assertThat(a.draining()).isZero();

        // Connections that never end: deleted once the drain timeout (15 minutes here) has passed.
        busyEverywhere();
        a.onDeltas(List.of(history.moveEndpoint(2, 8)));
        assertThat(drained()).isNotEmpty();
        clock.advance(Duration.ofMinutes(16));
        a.tick();
        assertThat(drained()).isEmpty();
        assertKernelHolds(history.latest());
    }

    @Test
    void changingModeRemovesWhatTheOtherModeLeft() throws Exception {
        Agent iptables = agent(false, dir.resolve("iptables"));
        iptables.start();
        assertThat(acks.get(acks.size() - 1).mode()).isEqualTo("iptables");
        assertThat(chains("filter")).contains("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-PROXY-CANARY");
        assertThat(chains("nat")).anyMatch(c -> c.startsWith("KUBE-SVC-"));

        // To IPVS mode: iptables mode's REJECTs for Services without endpoints must not outlive it.
        agent(true, dir.resolve("ipvs")).start();
        assertThat(acks.get(acks.size() - 1))
                .extracting(NodeAck::mode, NodeAck::status)
                .containsExactly("ipvs", NodeAck.Status.APPLIED);
        assertThat(chains("filter")).containsExactlyInAnyOrder(IpvsRules.FILTER_CHAINS.toArray(String[]::new));
        assertThat(chains("nat")).containsExactlyInAnyOrder(IpvsRules.NAT_CHAINS.toArray(String[]::new));
        assertThat(jumps("filter", "INPUT"))
                .containsExactly("KUBE-IPVS-FILTER", "KUBE-PROXY-FIREWALL", "KUBE-NODE-PORT");
        assertThat(jumps("filter", "FORWARD")).containsExactlyInAnyOrder("KUBE-PROXY-FIREWALL", "KUBE-FORWARD");
        assertThat(jumps("filter", "OUTPUT")).containsExactly("KUBE-IPVS-OUT-FILTER");
        assertThat(logs.lines()).anyMatch(l -> l.contains("chains and jumps iptables mode had left"));
        assertKernelHolds(history.latest());

        // And back: IPVS mode's filter would reject new connections to the addresses of its old sets.
        agent(false, dir.resolve("iptables-again")).start();
        assertThat(acks.get(acks.size() - 1).mode()).isEqualTo("iptables");
        assertThat(chains("filter"))
                .doesNotContain(
                        "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER", "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-NODE-PORT")
                .contains("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES");
        assertThat(chains("nat"))
                .doesNotContain("KUBE-NODE-PORT", "KUBE-LOAD-BALANCER")
                .contains("KUBE-NODEPORTS");
        assertThat(jumps("filter", "INPUT")).doesNotContain("KUBE-IPVS-FILTER", "KUBE-NODE-PORT");
        assertThat(jumps("filter", "OUTPUT")).doesNotContain("KUBE-IPVS-OUT-FILTER");
        assertThat(logs.lines()).anyMatch(l -> l.contains("chains and jumps IPVS mode had left"));
    }

    /** The KUBE- chains of a table in the namespace. */
    List<String> chains(String table) throws Exception {
        return run("ip", "netns", "exec", ns, "iptables", "-t", table, "-S")
                .stdout()
                .lines()
                .filter(l -> l.startsWith("-N KUBE-"))
                .map(l -> l.substring(3))
                .toList();
    }

    /** The targets of a built-in chain's KUBE- jumps, in order. */
    List<String> jumps(String table, String builtin) throws Exception {
        return run("ip", "netns", "exec", ns, "iptables", "-t", table, "-S", builtin)
                .stdout()
                .lines()
                .filter(l -> l.contains("-j KUBE-"))
                .map(l -> l.substring(l.lastIndexOf("-j ") + 3))
                .toList();
    }

    /** Every real server has an open connection. */
    void busyEverywhere() throws Exception {
        for (KernelVirtualServer k : ipvs.list()) {
            for (KernelRealServer r : k.realServers()) {
                ipvs.setConnections(k.service(), r.address(), r.port(), 1, 0);
            }
        }
    }

    /** The real servers at weight 0, as VIRTUAL -> REAL. */
    List<String> drained() throws Exception {
        List<String> out = new ArrayList<>();
        for (KernelVirtualServer k : ipvs.list()) {
            for (KernelRealServer r : k.realServers()) {
                if (r.weight() == 0) {
                    out.add(k.service().key() + " -> " + r.text());
                }
            }
        }
        return out;
    }
}
