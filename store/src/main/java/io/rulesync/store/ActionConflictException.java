package io.rulesync.store;

/** Another operator action of the same cluster is still pending: the new one was not recorded. */
public final class ActionConflictException extends Exception {
    private final long pendingId;

    public ActionConflictException(String message, long pendingId) {
        super(message);
        this.pendingId = pendingId;
    }

    /** The pending action's id (0 if it completed in the meantime). */
    public long pendingId() {
        return pendingId;
    }
}
