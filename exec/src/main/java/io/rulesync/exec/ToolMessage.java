package io.rulesync.exec;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a host tool said when it failed, cut to what an operator needs: the lines of its stderr (its stdout when stderr is
 * empty) without the ones known to be noise, joined with {@code "; "} and at most {@link #MAX_LENGTH} characters long.
 * The message travels in acks, the agent's log, {@code GET /nodes} and the dashboard, so it must say the reason and stay
 * small whatever the tool printed.
 *
 * <p>Noise is what a tool prints on its way to the reason, or after it, that says nothing of its own. Above all
 * libkmod's {@code modprobe}: ipvsadm, ipset and iptables-legacy ask it to load their module first, and on a kernel that
 * has the feature built in, or lacks it, or has no module directory at all, modprobe complains before the tool says
 * what actually happened ({@code Can't initialize ipvs: Protocol not available}). When every line is noise, the noise
 * is the message: something beats nothing.
 */
public final class ToolMessage {
    /** Longest message: a few lines of reason, never a whole listing. */
    public static final int MAX_LENGTH = 500;

    private static final List<Pattern> NOISE = List.of(
            // libkmod's modprobe and insmod, run by the tool before it talks to the kernel.
            Pattern.compile("^(modprobe|insmod): "),
            // ipvsadm's advice after "Can't initialize ipvs: ...".
            Pattern.compile("^Are you sure that IP Virtual Server is built in the kernel or as module\\?$"),
            // iptables' pointer to its help after a usage error.
            Pattern.compile("^Try `[\\w-]+ -h' or '[\\w-]+ --help' for more information\\.$"),
            // iptables-nft, when the legacy backend holds tables too: true, and beside the point of any failure.
            Pattern.compile("^# Warning: iptables-legacy tables present"));

    private ToolMessage() {}

    /** The tool's failure in one line: {@link #lines} of stderr (stdout when stderr is blank) joined, bounded; or its exit code. */
    public static String of(CommandRunner.Result r) {
        List<String> lines = lines(r.stderr().isBlank() ? r.stdout() : r.stderr());
        return lines.isEmpty() ? "exit code " + r.exit() : bounded(String.join("; ", lines));
    }

    /** The text's non-blank lines, stripped, without known noise; all of them when every one is noise. */
    public static List<String> lines(String text) {
        List<String> all =
                text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        List<String> meaningful = all.stream().filter(l -> !isNoise(l)).toList();
        return meaningful.isEmpty() ? all : meaningful;
    }

    static boolean isNoise(String line) {
        return NOISE.stream().anyMatch(p -> p.matcher(line).find());
    }

    /** At most {@link #MAX_LENGTH} characters, saying how much was left out. */
    public static String bounded(String s) {
        if (s.length() <= MAX_LENGTH) {
            return s;
        }
        int left = s.length() - MAX_LENGTH;
        return s.substring(0, MAX_LENGTH) + "... (" + left + " more characters)";
    }
}
