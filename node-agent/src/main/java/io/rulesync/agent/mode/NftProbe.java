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
 * Whether this node can run nftables mode, checked as kube-proxy does: {@code nft} 1.0.1 or newer, and a kernel that
 * takes what the mode writes (a probe table with a {@code numgen} verdict map rule, created and deleted in one
 * transaction, so nothing is left behind).
 */
public final class NftProbe {
    private static final Pattern VERSION = Pattern.compile("nftables v(\\d+)\\.(\\d+)\\.(\\d+)");
    static final String PROBE = """
            add table ip rulesync-probe
            add chain ip rulesync-probe probe
            add rule ip rulesync-probe probe numgen random mod 1 vmap { 0 : return }
            delete table ip rulesync-probe
            """;

    private NftProbe() {}

    /** Why nftables mode cannot be used here, or empty when it can. */
    public static Optional<String> problem(CommandRunner runner) {
        try {
            CommandRunner.Result v = runner.run(List.of("nft", "--version"), null, Duration.ofSeconds(10));
            if (!v.ok()) {
                return Optional.of(
                        v.stderr().contains("No such file or directory") ? "nft is not installed" : ToolMessage.of(v));
            }
            Optional<String> p = versionProblem(v.stdout());
            if (p.isPresent()) {
                return p;
            }
            CommandRunner.Result probe = runner.run(List.of("nft", "-f", "-"), PROBE, Duration.ofSeconds(10));
            return probe.ok()
                    ? Optional.empty()
                    : Optional.of("the kernel refused nftables mode's rules: " + ToolMessage.of(probe));
        } catch (IOException e) {
            return Optional.of("nft is not installed (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    /** What is wrong with the nft reported by {@code nft --version}, if anything. */
    static Optional<String> versionProblem(String output) {
        Matcher m = VERSION.matcher(output);
        if (!m.find()) {
            return Optional.of("cannot tell the nft version from '"
                    + ToolMessage.bounded(String.join("; ", ToolMessage.lines(output))) + "'");
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int patch = Integer.parseInt(m.group(3));
        boolean old = major < 1 || major == 1 && minor == 0 && patch < 1;
        return old
                ? Optional.of("nft " + major + "." + minor + "." + patch + " is older than 1.0.1")
                : Optional.empty();
    }
}
