package io.rulesync.agent.feed;

/** No snapshot could be had (the API is down, the version or node is unknown); the message says which. */
public class SnapshotUnavailableException extends Exception {
    public SnapshotUnavailableException(String message) {
        super(message);
    }

    public SnapshotUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
