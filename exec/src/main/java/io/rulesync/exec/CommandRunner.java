package io.rulesync.exec;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a host tool (iptables-restore, conntrack, ipset, ipvsadm, ip) and returns how it ended. The
 * kernel adapters take one, so that a lab can run them in a network namespace and a unit test can
 * script the answers. Depends on nothing else of the agent: the test lab shares it.
 */
@FunctionalInterface
public interface CommandRunner {
    /** How a command ended. {@code exit} is -1 when it was killed after its timeout. */
    record Result(int exit, String stdout, String stderr) {
        public boolean ok() {
            return exit == 0;
        }
    }

    /**
     * @param stdin its input; null: none
     * @throws IOException the program could not be started (not installed, not executable)
     */
    Result run(List<String> argv, String stdin, Duration timeout) throws IOException, InterruptedException;

    /** This runner, with every command run inside the named network namespace ({@code ip netns exec}); null: this runner. */
    default CommandRunner inNetns(String netns) {
        if (netns == null) {
            return this;
        }
        return (argv, stdin, timeout) -> {
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", netns));
            cmd.addAll(argv);
            return run(cmd, stdin, timeout);
        };
    }
}
