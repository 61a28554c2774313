package io.rulesync.store;

/**
 * Another compiler instance got there first: the consumer position or the cluster's head version
 * is not what this writer started from. Nothing was written; the writer must reload and retry.
 */
public class StaleWriteException extends Exception {
    public StaleWriteException(String message) {
        super(message);
    }
}
