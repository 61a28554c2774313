package io.rulesync.compiler.store;

/** The database failed (connection lost, constraint the code did not expect): not a data problem. */
public class StoreException extends RuntimeException {
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
