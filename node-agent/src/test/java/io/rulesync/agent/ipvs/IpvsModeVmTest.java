package io.rulesync.agent.ipvs;

import io.rulesync.exec.CommandRunner;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.vm.KernelVm;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link IpvsModeContract} against the real IPVS module: the agent's own adapters ({@link IpvsadmKernel},
 * {@link IpsetSync}, {@link BoundAddresses}, iptables-restore) drive a network namespace in the kernel lab's VM
 * (Debian's kernel, which has {@code ip_vs}), where kube-ipvs0 is a dummy device as kube-proxy makes it.
 */
@RequiresKernelVm
class IpvsModeVmTest extends IpvsModeContract {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    static KernelVm vm;

    @AutoClose
    KernelVm.Netns ns;

    @BeforeAll
    static void boot() {
        vm = KernelVm.shared();
        System.out.println(
                "IpvsModeVmTest: the lab VM answered " + vm.bootTime().toMillis() + " ms after qemu started");
    }

    @BeforeEach
    void namespace() {
        ns = vm.namespace("node" + NAMESPACES.incrementAndGet());
        vm.sh("ip -n " + ns.name() + " link add " + BoundAddresses.DEVICE + " type dummy");
    }

    @Override
    CommandRunner node() {
        return ns.runner();
    }

    @Override
    IpvsKernel table() {
        return new IpvsadmKernel(node());
    }
}
