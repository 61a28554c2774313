package io.rulesync.agent.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.exec.CommandRunner;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The probe's verdicts from scripted tool answers; {@code IpvsFallbackKernelTest} asks a real kernel. */
class IpvsProbeTest {
    private final List<String> ran = new ArrayList<>();

    /** Answers by program: a result, or null for "not installed". */
    private CommandRunner scripted(Map<String, CommandRunner.Result> answers) {
        return (argv, stdin, timeout) -> {
            ran.add(String.join(" ", argv));
            CommandRunner.Result r = answers.get(argv.get(0));
            if (r == null) {
                throw new IOException("Cannot run program \"" + argv.get(0) + "\": error=2, No such file or directory");
            }
            return r;
        };
    }

    @Test
    void usableWhenIpsetIsRecentAndTheKernelTakesAVirtualServerWhichIsRemovedAgain() {
        CommandRunner runner = scripted(Map.of(
                "ipset",
                new CommandRunner.Result(0, "ipset v7.17, protocol version: 7\n", ""),
                "ipvsadm",
                new CommandRunner.Result(0, "", "")));
        assertThat(IpvsProbe.problem(runner)).isEmpty();
        assertThat(ran)
                .containsExactly(
                        "ipset --version",
                        "ipvsadm -A -t " + IpvsProbe.DUMMY_SERVICE + " -s rr",
                        "ipvsadm -D -t " + IpvsProbe.DUMMY_SERVICE);
    }

    @Test
    void missingToolsAndAKernelWithoutIpvsAreNamed() {
        assertThat(IpvsProbe.problem(scripted(Map.of()))).contains("ipset is not installed");
        assertThat(IpvsProbe.problem(scripted(Map.of("ipset", new CommandRunner.Result(0, "ipset v7.17\n", "")))))
                .contains("ipvsadm is not installed");
        assertThat(
                        IpvsProbe.problem(
                                scripted(
                                        Map.of(
                                                "ipset",
                                                new CommandRunner.Result(0, "ipset v7.17\n", ""),
                                                "ipvsadm",
                                                new CommandRunner.Result(
                                                        2,
                                                        "",
                                                        "Can't initialize ipvs: Protocol not available\n"
                                                                + "Are you sure that IP Virtual Server is built in the kernel or as module?\n")))))
                .contains("Can't initialize ipvs: Protocol not available");
    }

    /** Where kmod is installed but the kernel has no module directory, ipvsadm's modprobe speaks first; the reason is ipvsadm's. */
    @Test
    void aKernelWithoutIpvsIsToldByIpvsadmsReasonNotModprobesLine() {
        String err = """
                modprobe: FATAL: Module ip_vs not found in directory /lib/modules/6.18.44-fc-v1252
                Can't initialize ipvs: Protocol not available
                Are you sure that IP Virtual Server is built in the kernel or as module?
                """;
        assertThat(IpvsProbe.problem(scripted(Map.of(
                        "ipset",
                        new CommandRunner.Result(0, "ipset v7.17\n", ""),
                        "ipvsadm",
                        new CommandRunner.Result(2, "", err)))))
                .contains("Can't initialize ipvs: Protocol not available");
    }
}
