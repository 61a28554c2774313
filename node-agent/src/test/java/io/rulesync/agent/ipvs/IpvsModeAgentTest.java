package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.Agent;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IpvsModeContract} on this host: a network namespace of its own, and {@link MemoryIpvs} for the table, as this
 * kernel has no IPVS. Connections are set by hand here, so draining is shown for every case, deadline included.
 */
@RequiresNetns
@RequiresTool("ipset")
class IpvsModeAgentTest extends IpvsModeContract {
    String ns;
    MemoryIpvs ipvs;

    @BeforeEach
    void namespace() throws Exception {
        ns = "rs-ipvsagent-" + UUID.randomUUID().toString().substring(0, 8);
        host("ip", "netns", "add", ns);
        // This kernel has no dummy driver; a veth named kube-ipvs0 holds addresses just the same.
        run("ip", "link", "add", BoundAddresses.DEVICE, "type", "veth", "peer", "name", "kipvs-peer");
        ipvs = new MemoryIpvs();
    }

    @AfterEach
    void deleteNamespace() throws Exception {
        if (ns != null) {
            HostCommand.PROCESSES.run(List.of("ip", "netns", "delete", ns), null, Duration.ofSeconds(10));
        }
    }

    @Override
    CommandRunner node() {
        return HostCommand.PROCESSES.inNetns(ns);
    }

    @Override
    IpvsKernel table() {
        return ipvs;
    }

    private static void host(String... argv) throws Exception {
        CommandRunner.Result r = HostCommand.PROCESSES.run(List.of(argv), null, Duration.ofSeconds(20));
        assertThat(r.ok()).as(String.join(" ", argv) + ": " + r.stderr()).isTrue();
    }

    /**
     * Switching modes is the iptables and ipset parts' business, the same on any kernel: proven here, not again in the
     * kernel lab.
     */
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
