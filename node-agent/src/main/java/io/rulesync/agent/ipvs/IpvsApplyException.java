package io.rulesync.agent.ipvs;

import java.util.List;

/**
 * A kernel tool of IPVS mode (ipvsadm, ipset, ip) refused something or could not run. Each failure
 * names the command or script line and gives the tool's own words.
 */
public class IpvsApplyException extends Exception {
    private final List<Failure> failures;

    /** One refused command: its text (an ipvsadm-restore line, an ipset restore line, ...) and why. */
    public record Failure(String command, String reason) {
        @Override
        public String toString() {
            return command + ": " + reason;
        }
    }

    /** A tool failed as a whole (not installed, unreadable output): no single command to blame. */
    public IpvsApplyException(String message) {
        super(message);
        this.failures = List.of();
    }

    public IpvsApplyException(String tool, List<Failure> failures) {
        super(message(tool, failures));
        this.failures = List.copyOf(failures);
    }

    /** The refused commands, first failure first; empty when the tool failed as a whole. */
    public List<Failure> failures() {
        return failures;
    }

    private static String message(String tool, List<Failure> failures) {
        if (failures.isEmpty()) {
            return tool + " failed";
        }
        String first = tool + " " + failures.get(0);
        return failures.size() == 1 ? first : first + " (and " + (failures.size() - 1) + " more refused)";
    }
}
