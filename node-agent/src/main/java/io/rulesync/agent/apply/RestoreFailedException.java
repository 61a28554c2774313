package io.rulesync.agent.apply;

/** The kernel refused a restore; nothing of it was applied. The message is the tool's own. */
public class RestoreFailedException extends Exception {
    public RestoreFailedException(String message) {
        super(message);
    }
}
