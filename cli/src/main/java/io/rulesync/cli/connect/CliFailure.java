package io.rulesync.cli.connect;

/**
 * Why a command did not do what was asked, as one line for the operator and the exit code scripts branch on
 * ({@link ExitCode}).
 */
public final class CliFailure extends RuntimeException {
    private final int exitCode;

    public CliFailure(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
