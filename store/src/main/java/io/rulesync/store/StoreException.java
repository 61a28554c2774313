package io.rulesync.store;

import java.sql.SQLException;
import java.util.function.Supplier;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.TransactionException;

/** The database failed (connection lost, constraint the code did not expect): not a data problem. */
public class StoreException extends RuntimeException {
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * Runs {@code work}, reporting a failure of the database as a StoreException naming {@code what}:
     * callers (the api's 503, the compiler's retry) see one type whatever Spring translated it to.
     */
    static <T> T during(String what, Supplier<T> work) {
        try {
            return work.get();
        } catch (DataAccessException | TransactionException e) {
            throw new StoreException(what + " failed", e);
        }
    }

    /** Whether a unique constraint refused the write (SQLSTATE 23505): another writer got there first. */
    static boolean uniqueViolation(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && "23505".equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }
}
