package io.rulesync.agent.ipvs;

import io.rulesync.agent.exec.HostCommand;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Runs a host tool in the agent's network namespace, or a named one through {@code ip netns exec}. */
final class InNamespace {
    private final List<String> prefix;

    /** {@code netns}: a named network namespace, or null for the agent's own. */
    InNamespace(String netns) {
        this.prefix = netns == null ? List.of() : List.of("ip", "netns", "exec", netns);
    }

    /** A tool that cannot be started, or an interrupt, becomes an {@link IpvsApplyException}. */
    HostCommand.Result run(List<String> argv, String stdin, Duration timeout) throws IpvsApplyException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(argv);
        try {
            return HostCommand.run(cmd, stdin, timeout);
        } catch (IOException e) {
            throw new IpvsApplyException("cannot run " + argv.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IpvsApplyException("interrupted while running " + String.join(" ", argv));
        }
    }
}
