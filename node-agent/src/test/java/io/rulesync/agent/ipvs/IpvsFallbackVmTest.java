package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same VM booted with its {@code ip_vs} module taken out, as a node where IPVS cannot be loaded: the agent asked for
 * IPVS mode programs iptables mode instead and says why, and the Service answers through it; told to refuse, it applies
 * nothing and acks the version failed.
 */
@RequiresKernelVm
class IpvsFallbackVmTest {
    static KernelVm vm;

    @TempDir
    Path dir;

    private VmNodeLab lab;

    @BeforeAll
    static void boot() {
        vm = KernelVm.boot(List.of("vmlab.without=ip_vs"));
    }

    @AfterAll
    static void powerOff() {
        if (vm != null) {
            vm.close();
        }
    }

    @BeforeEach
    void lab() {
        lab = new VmNodeLab(vm);
    }

    @AfterEach
    void tearDown() {
        lab.close();
    }

    private ClusterRules web() {
        return lab.cluster(
                "rr",
                Fixtures.service("web", VmNodeLab.WEB_IP),
                Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1)));
    }

    @Test
    void withoutIpVsTheAgentFallsBackToIptablesModeAndTheServiceAnswers() {
        assertThat(vm.sh("ipvsadm -Ln 2>&1 || true")).contains("Protocol not available");
        lab.agent(web(), WhenUnavailable.FALLBACK, dir);
        NodeAck ack = lab.lastAck();
        assertThat(ack.status()).isEqualTo(NodeAck.Status.APPLIED);
        assertThat(ack.mode()).isEqualTo("iptables (ipvs unavailable: Can't initialize ipvs: Protocol not available)");
        assertThat(lab.fetch("pk-client1", "http://" + VmNodeLab.WEB_IP + "/", 20))
                .containsOnly("pod0", "pod1")
                .contains("pod0", "pod1");
    }

    @Test
    void toldToRefuseItAppliesNothingAndAcksWhy() {
        lab.agent(web(), WhenUnavailable.REFUSE, dir);
        NodeAck ack = lab.lastAck();
        assertThat(ack.status()).isEqualTo(NodeAck.Status.FAILED);
        assertThat(ack.error()).startsWith("ipvs mode was asked for and cannot be used (Can't initialize ipvs");
        assertThat(vm.sh("ip netns exec " + VmNodeLab.NODE_NS + " iptables-save"))
                .doesNotContain("KUBE-");
    }
}
