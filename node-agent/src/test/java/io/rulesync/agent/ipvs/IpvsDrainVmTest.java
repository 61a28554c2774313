package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.agent.Agent;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.agent.testing.History;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Graceful termination on the real module: a real server whose endpoint goes while a connection through it is open
 * stays, at weight 0, so that the connection lives and new ones go elsewhere, until its connections end or its drain
 * deadline passes, whichever comes first.
 */
@RequiresKernelVm
class IpvsDrainVmTest {
    private static final String VIP = "10.96.0.16";
    private static final String SERVICE = "kind: Service\nmetadata: {name: drain, namespace: shop}\n"
            + "spec: {clusterIP: " + VIP + ", ports: [{name: http, port: 80}]}\n";
    private static final String POD0 = VmNodeLab.PODS.get(0);
    private static final String POD1 = VmNodeLab.PODS.get(1);

    @TempDir
    Path dir;

    private KernelVm vm;
    private VmNodeLab lab;
    private final MutableClock clock = new MutableClock();
    private History history;
    private Agent agent;

    @BeforeEach
    void lab() {
        vm = KernelVm.shared();
        lab = new VmNodeLab(vm);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    private KernelRealServer real(String pod) throws Exception {
        ServiceId id = new ServiceId(IpAddress.parse(VIP), 80, Protocol.TCP);
        for (KernelVirtualServer k : lab.table().list(List.of(id))) {
            for (KernelRealServer r : k.realServers()) {
                if (r.address().equals(IpAddress.parse(pod))) {
                    return r;
                }
            }
        }
        return null;
    }

    /** pod0 serving the Service and holding a connection from client2; then its endpoint moves to pod1. */
    private void drainWhileConnected() throws Exception {
        history = new History(lab.cluster("rr", SERVICE, Fixtures.slice("drain", "node-a", POD0)));
        agent = lab.agent(history, WhenUnavailable.REFUSE, dir, clock);
        assertThat(lab.lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);

        assertThat(lab.hold("pk-client2", VIP + ":80", "drain")).isEqualTo("pod0");
        assertThat(real(POD0).activeConnections()).isEqualTo(1);

        agent.onDeltas(List.of(history.next(lab.cluster("rr", SERVICE, Fixtures.slice("drain", "node-a", POD1)))));
        assertThat(lab.lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);
        assertThat(real(POD0))
                .as("pod0, draining")
                .extracting(KernelRealServer::weight, KernelRealServer::activeConnections)
                .containsExactly(0, 1);
        assertThat(real(POD1).weight()).isEqualTo(1);
        assertThat(lab.fetch("pk-client1", "http://" + VIP + "/", 4)).containsOnly("pod1");

        // Still connected at the next looks: still there.
        clock.advance(Duration.ofSeconds(6));
        agent.tick();
        assertThat(real(POD0)).as("pod0, still draining").isNotNull();
    }

    @Test
    void aDrainingRealServerIsDeletedOnceItsConnectionsEnd() throws Exception {
        drainWhileConnected();

        lab.reset("drain");
        assertThat(lab.connections(VIP)).as("the connection, reset").contains("CLOSE");
        // The kernel forgets a reset connection after ten seconds; the agent's next look after that deletes pod0,
        // long before its deadline.
        Instant start = clock.instant();
        await().atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    clock.advance(Duration.ofSeconds(1));
                    agent.tick();
                    assertThat(real(POD0)).as("pod0, its connection gone").isNull();
                });
        assertThat(Duration.between(start, clock.instant())).isLessThan(IpvsPlan.DEFAULT_DRAIN_TIMEOUT);
        assertThat(agent.draining()).isZero();
        assertThat(real(POD1).weight()).isEqualTo(1);
    }

    @Test
    void aDrainingRealServerIsDeletedAtItsDeadlineConnectedOrNot() throws Exception {
        drainWhileConnected();

        clock.advance(IpvsPlan.DEFAULT_DRAIN_TIMEOUT.plusMinutes(1));
        agent.tick();
        assertThat(real(POD0)).as("pod0, past its deadline").isNull();
        assertThat(agent.draining()).isZero();
    }
}
