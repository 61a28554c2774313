package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Graceful termination on the real module: a real server whose endpoint goes while a connection through it is open
 * stays, at weight 0, so that the connection lives and new ones go elsewhere, until its drain deadline (or the end of
 * its connections: in the kernel that takes two minutes of TIME_WAIT, which the in-memory table's test shows instead).
 */
@RequiresKernelVm
class IpvsDrainVmTest {
    private static final String VIP = "10.96.0.16";

    @TempDir
    Path dir;

    private KernelVm vm;
    private VmNodeLab lab;

    @BeforeEach
    void lab() {
        vm = KernelVm.shared();
        lab = new VmNodeLab(vm);
    }

    @AfterEach
    void tearDown() {
        vm.sh("pkill -f 'sleep 97' || true");
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

    @Test
    void aRemovedRealServerWithAnOpenConnectionDrainsAtWeightZeroUntilItsDeadline() throws Exception {
        String pod0 = VmNodeLab.PODS.get(0);
        String pod1 = VmNodeLab.PODS.get(1);
        String service = "kind: Service\nmetadata: {name: drain, namespace: shop}\n" + "spec: {clusterIP: " + VIP
                + ", ports: [{name: http, port: 80}]}\n";
        History history = new History(lab.cluster("rr", service, Fixtures.slice("drain", "node-a", pod0)));
        MutableClock clock = new MutableClock();
        Agent agent = lab.agent(history, WhenUnavailable.REFUSE, dir, clock);
        assertThat(lab.lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);

        // A connection to pod0 that stays open (the client sends nothing; the server waits for its request).
        vm.sh("(ip netns exec pk-client2 sh -c 'sleep 97 | nc " + VIP + " 80' > /dev/null 2>&1 &); sleep 1");
        assertThat(real(pod0).activeConnections()).isEqualTo(1);

        agent.onDeltas(List.of(history.next(lab.cluster("rr", service, Fixtures.slice("drain", "node-a", pod1)))));
        assertThat(lab.lastAck().status()).isEqualTo(NodeAck.Status.APPLIED);
        assertThat(real(pod0))
                .as("pod0, draining")
                .extracting(KernelRealServer::weight, KernelRealServer::activeConnections)
                .containsExactly(0, 1);
        assertThat(real(pod1).weight()).isEqualTo(1);
        assertThat(lab.fetch("pk-client1", "http://" + VIP + "/", 4)).containsOnly("pod1");

        // Still connected at the next looks: still there.
        clock.advance(Duration.ofSeconds(6));
        agent.tick();
        assertThat(real(pod0)).as("pod0, still draining").isNotNull();

        // Its deadline passed: deleted, connection or not.
        clock.advance(IpvsPlan.DEFAULT_DRAIN_TIMEOUT.plusMinutes(1));
        agent.tick();
        assertThat(real(pod0)).as("pod0, past its deadline").isNull();
        assertThat(agent.draining()).isZero();
    }
}
