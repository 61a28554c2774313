package io.rulesync.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A runner's namespace wrapper, with a scripted runner: what reaches the host is the argv with {@code ip netns exec} before it. */
class CommandRunnerTest {
    @Test
    void inANamedNamespaceEveryCommandIsRunThroughIpNetnsExec() throws Exception {
        List<List<String>> ran = new ArrayList<>();
        CommandRunner scripted = (argv, stdin, timeout) -> {
            ran.add(argv);
            return new CommandRunner.Result(0, "out of " + argv.get(argv.size() - 1), "");
        };
        CommandRunner.Result r = scripted.inNetns("node-1").run(List.of("ipset", "save"), null, Duration.ofSeconds(1));
        assertThat(ran).containsExactly(List.of("ip", "netns", "exec", "node-1", "ipset", "save"));
        assertThat(r.ok()).isTrue();
        assertThat(r.stdout()).isEqualTo("out of save");
    }

    @Test
    void withoutANamespaceTheRunnerIsItself() {
        CommandRunner scripted = (argv, stdin, timeout) -> new CommandRunner.Result(1, "", "no");
        assertThat(scripted.inNetns(null)).isSameAs(scripted);
    }

    @Test
    void theHostRunnerFeedsStdinAndReadsBothPipes() throws Exception {
        CommandRunner.Result r = HostCommand.PROCESSES.run(
                List.of("sh", "-c", "cat; echo err >&2; exit 3"), "in", Duration.ofSeconds(10));
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("in");
        assertThat(r.stderr()).isEqualTo("err\n");
    }

    /** Tools speak the C locale whatever this process's LANG is, so their messages read (and match) the same on every node. */
    @Test
    void toolsRunInTheCLocale() throws Exception {
        CommandRunner.Result r =
                HostCommand.PROCESSES.run(List.of("sh", "-c", "echo \"$LC_ALL\""), null, Duration.ofSeconds(10));
        assertThat(r.stdout().strip()).isEqualTo("C");
    }

    /**
     * The tool reads its input from a file written in full before it started, not from a pipe the caller feeds: a caller
     * killed after the start cannot truncate it. The file is unlinked once the tool has it open.
     */
    @Test
    void theInputIsWholeBeforeTheToolStartsAndLeavesNoFileBehind() throws Exception {
        String big = "-A KUBE-SVC-X -j KUBE-SEP-Y\n".repeat(200_000); // 5.6 MB: far beyond a pipe's buffer
        // The runner unlinks the file just after the tool started, so the tool waits (at most 2 s) for its name to go
        // before it looks: a tool quick enough to look first saw the name still there.
        CommandRunner.Result r = HostCommand.PROCESSES.run(
                List.of(
                        "sh",
                        "-c",
                        "f=$(readlink /proc/self/fd/0); i=0; "
                                + "while [ -e \"$f\" ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i+1)); done; readlink /proc/self/fd/0 >&2; wc -c"),
                big,
                Duration.ofSeconds(30));
        assertThat(r.stdout().strip()).isEqualTo(Integer.toString(big.length()));
        // stdin is a file (unlinked by then: readlink says "(deleted)"), not a pipe the caller writes into. This file's
        // name
        // is checked, not a count of the directory's: other processes of the host may have theirs there meanwhile.
        String input = r.stderr().strip();
        assertThat(input).contains("rulesync-input-").endsWith(" (deleted)").doesNotContain("pipe:");
        assertThat(java.nio.file.Path.of(input.substring(0, input.length() - " (deleted)".length())))
                .doesNotExist();
    }
}
