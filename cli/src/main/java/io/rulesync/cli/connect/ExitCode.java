package io.rulesync.cli.connect;

/** What the command line's exit status says; scripts branch on these. */
public final class ExitCode {
    /** Done. */
    public static final int OK = 0;
    /** The api refused (no such cluster or version, not allowed, a conflict with a pending action, ...). */
    public static final int REFUSED = 1;
    /** The command was given wrongly: an unknown option, a bad value, a configuration file others can read. */
    public static final int USAGE = 2;
    /** The api could not be reached, or could not answer (its database is down). */
    public static final int UNREACHABLE = 3;

    private ExitCode() {}
}
