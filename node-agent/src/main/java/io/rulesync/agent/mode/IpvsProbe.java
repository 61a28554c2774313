package io.rulesync.agent.mode;

import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether this node can run IPVS mode, checked the way kube-proxy's {@code CanUseIPVSProxier} does:
 * ipset 6.0 or newer, and the kernel accepting a virtual server (a dummy one at a documentation
 * address, removed at once). Runs where its runner runs: the node's network namespace, or a lab's.
 */
public final class IpvsProbe {
    /** TEST-NET-2, never routed: what kube-proxy uses for the same check. */
    static final String DUMMY_SERVICE = "198.51.100.0:20000";

    private static final Pattern IPSET_VERSION = Pattern.compile("ipset v(\\d+)\\.(\\d+)");

    private IpvsProbe() {}

    /** Why IPVS cannot be used here, or empty when it can. */
    public static Optional<String> problem(CommandRunner runner) {
        Result ipset = run(runner, "ipset", "--version");
        Optional<String> p = ipset.missing()
                ? Optional.of("ipset is not installed")
                : ipsetProblem(ipset.result().stdout());
        if (p.isPresent()) {
            return p;
        }
        Result add = run(runner, "ipvsadm", "-A", "-t", DUMMY_SERVICE, "-s", "rr");
        if (add.missing()) {
            return Optional.of("ipvsadm is not installed");
        }
        if (!add.result().ok()) {
            return Optional.of(ToolMessage.of(add.result()));
        }
        run(runner, "ipvsadm", "-D", "-t", DUMMY_SERVICE);
        return Optional.empty();
    }

    /** What is wrong with the ipset reported by {@code ipset --version}, if anything. */
    static Optional<String> ipsetProblem(String versionOutput) {
        Matcher m = IPSET_VERSION.matcher(versionOutput);
        if (!m.find()) {
            return Optional.of("cannot tell the ipset version from '"
                    + ToolMessage.bounded(String.join("; ", ToolMessage.lines(versionOutput))) + "'");
        }
        return Integer.parseInt(m.group(1)) < 6
                ? Optional.of("ipset " + m.group(1) + "." + m.group(2) + " is older than 6.0")
                : Optional.empty();
    }

    /** A command's outcome; {@code missing}: the program is not installed. */
    private record Result(boolean missing, CommandRunner.Result result) {}

    private static Result run(CommandRunner runner, String... argv) {
        try {
            CommandRunner.Result r = runner.run(List.of(argv), null, Duration.ofSeconds(10));
            // "ip netns exec" reports a missing program with exit code 255 and this message.
            boolean missing = !r.ok()
                    && r.stderr().contains("No such file or directory")
                    && r.stderr().contains(argv[0]);
            return new Result(missing, r);
        } catch (IOException e) {
            return new Result(true, new CommandRunner.Result(-1, "", e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(false, new CommandRunner.Result(-1, "", "interrupted"));
        }
    }
}
