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
        CommandRunner.Result r = HostCommand.PROCESSES.run(List.of("sh", "-c", "cat; echo err >&2; exit 3"), "in", Duration.ofSeconds(10));
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("in");
        assertThat(r.stderr()).isEqualTo("err\n");
    }
}
