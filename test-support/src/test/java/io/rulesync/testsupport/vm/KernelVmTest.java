package io.rulesync.testsupport.vm;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.exec.CommandRunner;
import io.rulesync.testing.needs.RequiresKernelVm;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lab boots Debian's kernel, runs commands as the host's runner does, and has what this host's kernel lacks. */
@RequiresKernelVm
class KernelVmTest {
    static KernelVm vm;

    @BeforeAll
    static void boot() {
        vm = KernelVm.shared();
        System.out.println("KernelVmTest: answered " + vm.bootTime().toMillis() + " ms after qemu started");
    }

    @Test
    void commandsRunWithTheirInputAndGiveBackEveryByteAndTheirExitCode() throws Exception {
        CommandRunner.Result r = vm.runner()
                .run(
                        List.of(
                                "bash",
                                "-c",
                                "cat; printf 'two words\\n' >&2; printf '%s|' \"$@\"; exit 3",
                                "-",
                                "a b",
                                "",
                                "c'd\"e"),
                        "in 1\nin 2\n",
                        Duration.ofSeconds(20));
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("in 1\nin 2\na b||c'd\"e|");
        assertThat(r.stderr()).isEqualTo("two words\n");
        assertThat(vm.runner()
                        .run(List.of("sleep", "30"), null, Duration.ofSeconds(1))
                        .exit())
                .as("killed after its timeout")
                .isEqualTo(-1);
        // One connection carries every command: a large input and output (not ASCII) leave the next one framed.
        String big = ("ü " + "x".repeat(98) + "\n").repeat(3000);
        assertThat(vm.runner().run(List.of("cat"), big, Duration.ofSeconds(60)).stdout())
                .isEqualTo(big);
        assertThat(vm.runner()
                        .run(List.of("echo", "after"), null, Duration.ofSeconds(10))
                        .stdout())
                .isEqualTo("after\n");
        long start = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            assertThat(vm.runner()
                            .run(List.of("true"), null, Duration.ofSeconds(10))
                            .ok())
                    .isTrue();
        }
        System.out.println("KernelVmTest: a command's round trip took " + (System.nanoTime() - start) / 20 / 1_000_000
                + " ms on average (20 commands)");
    }

    @Test
    void itHasIpvsAndItsToolsAndNamespaces() throws Exception {
        assertThat(vm.sh("uname -r")).isNotBlank();
        assertThat(vm.sh("ipvsadm -Ln")).startsWith("IP Virtual Server version");
        String ns = "kernelvmtest";
        vm.sh("ip netns add " + ns);
        try {
            CommandRunner inside = vm.runner().inNetns(ns);
            assertThat(inside.run(
                                    List.of("ipvsadm", "-A", "-t", "10.96.0.1:443", "-s", "rr"),
                                    null,
                                    Duration.ofSeconds(10))
                            .ok())
                    .isTrue();
            assertThat(inside.run(List.of("ipvsadm", "-Ln"), null, Duration.ofSeconds(10))
                            .stdout())
                    .contains("TCP  10.96.0.1:443 rr");
            assertThat(vm.sh("ipvsadm -Ln"))
                    .as("a namespace's table is its own")
                    .doesNotContain("10.96.0.1");
            assertThat(vm.sh("ip netns exec " + ns + " ipset create t hash:ip,port && echo ok"))
                    .isEqualTo("ok\n");
            assertThat(vm.sh("ip netns exec " + ns + " iptables -t nat -S | head -1"))
                    .isEqualTo("-P PREROUTING ACCEPT\n");
        } finally {
            vm.sh("ip netns delete " + ns);
        }
    }
}
