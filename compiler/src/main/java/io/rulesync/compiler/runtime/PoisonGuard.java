package io.rulesync.compiler.runtime;

import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * Decides when a batch that keeps failing is the fault of one of its records (a poison record), so that the partition
 * moves on without it, and when it is not, so that nothing is given up.
 *
 * <p>A failure is the records' fault when PostgreSQL refused the data (SQLSTATE class 22, data exception; 23, integrity,
 * other than the unique keys that mean another writer) or the compiler's own code threw (a bug that this input
 * triggers). Everything else (the database unreachable, slow, locked, stopping, or a schema that is not what the code
 * expects) is retried for ever: waiting loses nothing. A batch failing {@link #ATTEMPTS} times for the records' fault
 * is taken apart: each record on its own, and one that fails alone is quarantined as a dead letter. If
 * {@link #IN_A_ROW} records in a row fail alone with no success between, the fault is not in the records after all
 * (every record fails): the partition stops quarantining and waits, until something succeeds again.
 *
 * <p>Pure bookkeeping, per partition; used on the consumer's thread.
 */
final class PoisonGuard {
    /** Whole-batch attempts before the batch is taken apart. */
    static final int ATTEMPTS = 3;
    /** Records quarantined in a row, with no success between, before the guard concludes the records are not at fault. */
    static final int IN_A_ROW = 5;

    private record Key(int partition, long firstOffset) {}

    private final Map<Key, Integer> attempts = new HashMap<>();
    private final Map<Integer, Integer> quarantinedInARow = new HashMap<>();
    private final Set<Integer> notTheRecords = new HashSet<>();

    /**
     * A batch of {@code partition} starting at {@code firstOffset} failed with {@code e}: whether to take it apart now
     * (otherwise it is retried whole).
     */
    synchronized boolean takeApart(int partition, long firstOffset, Throwable e) {
        if (!recordsFault(e) || notTheRecords.contains(partition)) {
            return false;
        }
        attempts.keySet().removeIf(k -> k.partition() == partition && k.firstOffset() != firstOffset);
        return attempts.merge(new Key(partition, firstOffset), 1, Integer::sum) >= ATTEMPTS;
    }

    /** Something of {@code partition} was committed: its records are not all poison, whatever failed before. */
    synchronized void succeeded(int partition) {
        attempts.keySet().removeIf(k -> k.partition() == partition);
        quarantinedInARow.remove(partition);
        notTheRecords.remove(partition);
    }

    /**
     * A record of {@code partition} failed on its own: whether it may be quarantined. False once {@link #IN_A_ROW} were,
     * with no success between; the partition then waits (and says so) until something succeeds.
     */
    synchronized boolean mayQuarantine(int partition) {
        if (quarantinedInARow.merge(partition, 1, Integer::sum) > IN_A_ROW) {
            notTheRecords.add(partition);
            return false;
        }
        return true;
    }

    /** Whether {@code e} says the data was at fault (see the class), rather than the database or its reach. */
    static boolean recordsFault(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof TransientDataAccessException
                    || t instanceof RecoverableDataAccessException
                    || t instanceof CannotGetJdbcConnectionException
                    || t instanceof SQLTransientException
                    || t instanceof java.io.IOException) {
                return false;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                return state.startsWith("22") || (state.startsWith("23") && !state.equals("23505"));
            }
        }
        // No SQLSTATE: a database failure without one (a closed pool, a timeout) is not the data's; anything else is
        // the compiler's own code failing on this input.
        return !(e instanceof io.rulesync.store.StoreException)
                && !(e instanceof org.springframework.dao.DataAccessException);
    }
}
