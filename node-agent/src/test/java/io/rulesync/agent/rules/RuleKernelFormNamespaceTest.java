package io.rulesync.agent.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.KernelListing;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.Table;
import io.rulesync.testing.needs.RequiresNetns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kernel is the reference for {@link Rule#kernelForm}: each file is restored into a
 * fresh network namespace (never the host's own rules) and every declared chain read back with
 * {@code iptables -S CHAIN} must equal {@link KernelListing#of} line for line.
 */
@RequiresNetns
class RuleKernelFormNamespaceTest {
    private static final SecureRandom RANDOM = new SecureRandom();

    static Stream<RestoreFile> files() {
        return Stream.concat(RestoreFile.golden().stream(), RestoreFile.edgeCases().stream());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("files")
    void kernelPrintsTheComputedForm(RestoreFile file) throws IOException {
        String ns = "rsrules-" + HexFormat.of().formatHex(RANDOM.generateSeed(4));
        Result add = run(List.of("ip", "netns", "add", ns), null);
        assertThat(add.code()).as("ip netns add %s: %s", ns, add.stderr()).isZero();
        try {
            String tool = file.family() == IpFamily.IPV4 ? "iptables" : "ip6tables";
            Result restore = run(List.of("ip", "netns", "exec", ns, tool + "-restore"), file.path());
            assertThat(restore.code())
                    .as("%s-restore of %s: %s", tool, file.path(), restore.stderr())
                    .isZero();
            for (Map.Entry<Table, List<Chain>> e : file.chains().entrySet()) {
                for (Chain chain : e.getValue()) {
                    Result listing = run(
                            List.of(
                                    "ip",
                                    "netns",
                                    "exec",
                                    ns,
                                    tool,
                                    "-t",
                                    e.getKey().restoreName(),
                                    "-S",
                                    chain.name()),
                            null);
                    assertThat(listing.code())
                            .as("%s -S %s: %s", tool, chain.name(), listing.stderr())
                            .isZero();
                    List<String> actual = listing.stdout().lines().toList();
                    assertThat(KernelListing.of(e.getKey(), file.family(), chain))
                            .as("%s %s chain %s", file, e.getKey().restoreName(), chain.name())
                            .containsExactlyElementsOf(actual);
                }
            }
        } finally {
            Result del = run(List.of("ip", "netns", "delete", ns), null);
            assertThat(del.code())
                    .as("ip netns delete %s: %s", ns, del.stderr())
                    .isZero();
        }
    }

    private record Result(int code, String stdout, String stderr) {}

    private static Result run(List<String> command, Path stdin) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (stdin != null) {
            pb.redirectInput(stdin.toFile());
        }
        Process p = pb.start();
        // Outputs are small (one chain), so reading them one after the other cannot block.
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        return new Result(p.exitValue(), out, err);
    }
}
