package io.rulesync.agent.ipvs;

import io.rulesync.exec.CommandRunner;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** Runs a host tool through the agent's runner; one that cannot be started, or an interrupt, becomes an {@link IpvsApplyException}. */
final class HostTool {
    private final CommandRunner runner;

    HostTool(CommandRunner runner) {
        this.runner = Objects.requireNonNull(runner, "runner");
    }

    CommandRunner.Result run(List<String> argv, String stdin, Duration timeout) throws IpvsApplyException {
        try {
            return runner.run(argv, stdin, timeout);
        } catch (IOException e) {
            throw new IpvsApplyException("cannot run " + argv.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IpvsApplyException("interrupted while running " + String.join(" ", argv));
        }
    }
}
