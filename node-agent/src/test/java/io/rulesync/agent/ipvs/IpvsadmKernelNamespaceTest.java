package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.testing.needs.KernelFeature;
import io.rulesync.testing.needs.RequiresKernelFeature;
import io.rulesync.testing.needs.RequiresKernelWithout;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.netns.NetnsLab;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IpvsadmKernelContract} on this host's kernel, where it has IPVS; where it has none (this project's machines:
 * {@link IpvsadmKernelVmTest} runs the table tests in the kernel lab), the adapter is shown to fail with a clear
 * message instead.
 */
@RequiresNetns
@RequiresTool("ipvsadm")
class IpvsadmKernelNamespaceTest extends IpvsadmKernelContract {
    private NetnsLab lab;

    @BeforeEach
    void lab() {
        lab = new NetnsLab(0);
    }

    @AfterEach
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    @Override
    CommandRunner node() {
        return HostCommand.PROCESSES.inNetns(lab.nodeNs());
    }

    @Override
    @Test
    @RequiresKernelFeature(KernelFeature.IPVS)
    void plansApplyAndReadBackExactly() throws Exception {
        super.plansApplyAndReadBackExactly();
    }

    @Override
    @Test
    @RequiresKernelFeature(KernelFeature.IPVS)
    void refusedCommandsAreNamed() throws Exception {
        super.refusedCommandsAreNamed();
    }

    /** Whether or not this machine has kmod and a module directory (modprobe then speaks first), the reason is ipvsadm's. */
    @Test
    @RequiresKernelWithout(KernelFeature.IPVS)
    void withoutIpvsTheAdapterSaysWhy() {
        assertThatThrownBy(() -> kernel().list())
                .isInstanceOf(IpvsApplyException.class)
                .hasMessage("ipvsadm -Ln failed: Can't initialize ipvs: Protocol not available");
    }
}
