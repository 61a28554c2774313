package io.rulesync.exec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A tool's failure told by the lines that say why, whatever the host printed around them. */
class ToolMessageTest {
    /** What ipvsadm prints on a kernel without IPVS whose machine has kmod but no module directory. */
    private static final String IPVSADM_WITHOUT_MODULES = """
            modprobe: FATAL: Module ip_vs not found in directory /lib/modules/6.18.44-fc-v1252
            Can't initialize ipvs: Protocol not available
            Are you sure that IP Virtual Server is built in the kernel or as module?
            """;

    /** The same where modprobe is not installed: ipvsadm's exec of it fails silently. */
    private static final String IPVSADM_WITHOUT_KMOD = """
            Can't initialize ipvs: Protocol not available
            Are you sure that IP Virtual Server is built in the kernel or as module?
            """;

    @Test
    void ipvsadmIsToldByItsOwnReasonWithOrWithoutModprobesLine() {
        assertThat(ToolMessage.of(new CommandRunner.Result(2, "", IPVSADM_WITHOUT_MODULES)))
                .isEqualTo("Can't initialize ipvs: Protocol not available");
        assertThat(ToolMessage.of(new CommandRunner.Result(2, "", IPVSADM_WITHOUT_KMOD)))
                .isEqualTo("Can't initialize ipvs: Protocol not available");
    }

    @Test
    void iptablesLegacyOnAKernelWithoutItsModuleSaysWhichTableFailed() {
        String err = """
                modprobe: FATAL: Module ip_tables not found in directory /lib/modules/6.1.0-28-amd64
                iptables-restore v1.8.9 (legacy): iptables-restore: unable to initialize table 'nat'

                Error occurred at line: 1
                Try `iptables-restore -h' or 'iptables-restore --help' for more information.
                """;
        assertThat(ToolMessage.of(new CommandRunner.Result(1, "", err)))
                .isEqualTo(
                        "iptables-restore v1.8.9 (legacy): iptables-restore: unable to initialize table 'nat'; Error occurred at line: 1");
    }

    @Test
    void onlyNoiseIsStillSaidRatherThanNothing() {
        String err = "modprobe: FATAL: Module ip_set not found in directory /lib/modules/6.18.44\n";
        assertThat(ToolMessage.of(new CommandRunner.Result(1, "", err)))
                .isEqualTo("modprobe: FATAL: Module ip_set not found in directory /lib/modules/6.18.44");
    }

    @Test
    void stdoutIsTheMessageWhenStderrIsBlankAndTheExitCodeWhenBothAre() {
        assertThat(ToolMessage.of(new CommandRunner.Result(1, "RTNETLINK answers: File exists\n", "  \n")))
                .isEqualTo("RTNETLINK answers: File exists");
        assertThat(ToolMessage.of(new CommandRunner.Result(4, "", ""))).isEqualTo("exit code 4");
    }

    @Test
    void aLongOutputIsCutAndSaysHowMuchWasLeftOut() {
        String err = "ipset v7.17: " + "x".repeat(10_000);
        String m = ToolMessage.of(new CommandRunner.Result(1, "", err));
        assertThat(m)
                .hasSize(ToolMessage.MAX_LENGTH + "... (9513 more characters)".length())
                .startsWith("ipset v7.17: xxx")
                .endsWith("... (9513 more characters)");
    }

    @Test
    void onlyWholeLinesOfKnownNoiseAreDropped() {
        assertThat(ToolMessage.isNoise("modprobe: ERROR: could not insert 'ip_vs': Operation not permitted"))
                .isTrue();
        assertThat(ToolMessage.isNoise("# Warning: iptables-legacy tables present, use iptables-legacy to see them"))
                .isTrue();
        assertThat(ToolMessage.isNoise("Can't initialize ipvs: Protocol not available"))
                .isFalse();
        assertThat(ToolMessage.isNoise("ipset v7.17: Kernel error received: modprobe: nothing"))
                .isFalse();
        assertThat(ToolMessage.lines("a\n\n  b  \nmodprobe: x\n")).containsExactly("a", "b");
    }
}
