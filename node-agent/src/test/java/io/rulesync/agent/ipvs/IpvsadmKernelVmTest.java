package io.rulesync.agent.ipvs;

import io.rulesync.exec.CommandRunner;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.vm.KernelVm;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** {@link IpvsadmKernelContract} against the real {@code ip_vs} module, in a namespace of the kernel lab's VM. */
@RequiresKernelVm
class IpvsadmKernelVmTest extends IpvsadmKernelContract {
    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    static KernelVm vm;

    @AutoClose
    KernelVm.Netns ns;

    @BeforeAll
    static void boot() {
        vm = KernelVm.shared();
    }

    @BeforeEach
    void namespace() {
        ns = vm.namespace("table" + NAMESPACES.incrementAndGet());
    }

    @Override
    CommandRunner node() {
        return ns.runner();
    }
}
