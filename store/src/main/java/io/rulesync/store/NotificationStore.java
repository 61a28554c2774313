package io.rulesync.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What operators are told (table {@code notification}, written by triggers where the facts are stored; see its
 * migration), where each webhook destination has got to, and the deliveries given up.
 */
public final class NotificationStore {
    /** One thing to tell: {@code kind} is {@code rollout.halted}, {@code node.failed}, ... */
    public record Notification(
            long id, Instant at, String kind, String cluster, Long version, String node, String detail) {}

    /** A delivery given up after its retries. */
    public record Failure(
            long id,
            long notificationId,
            String destination,
            String cluster,
            String kind,
            int attempts,
            String error,
            Instant failedAt) {}

    /** What a sender does with the rows after a destination's cursor, inside the transaction that holds the cursor. */
    @FunctionalInterface
    public interface Sender {
        /**
         * Sends {@code rows} in order and returns how many were dealt with (delivered, or given up and recorded); the
         * cursor moves past those.
         */
        int send(List<Notification> rows);
    }

    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public NotificationStore(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /** A destination's cursor, made at the newest row if it has none: a new receiver is told what happens from now on. */
    public void register(String destination) {
        StoreException.during(
                "registering a webhook",
                () -> sql.sql(
                                "INSERT INTO webhook_cursor (destination, last_id) "
                                        + "SELECT ?, coalesce(max(id), 0) FROM notification ON CONFLICT (destination) DO NOTHING")
                        .param(destination)
                        .update());
    }

    /**
     * Locks {@code destination}'s cursor (skipped when another replica holds it, or it was not {@link #register}ed:
     * false), reads up to {@code limit} rows after it, hands them to {@code sender} and moves the cursor past what it
     * dealt with, in one transaction.
     */
    public boolean sendNext(String destination, int limit, Sender sender) {
        return StoreException.during(
                "sending notifications",
                () -> tx.execute(s -> {
                    Optional<Long> last = sql.sql(
                                    "SELECT last_id FROM webhook_cursor WHERE destination = ? FOR UPDATE SKIP LOCKED")
                            .param(destination)
                            .query(Long.class)
                            .optional();
                    if (last.isEmpty()) {
                        return false;
                    }
                    List<Notification> rows = sql.sql(
                                    "SELECT id, at, kind, cluster, version, node, detail FROM notification WHERE id > ? "
                                            + "ORDER BY id LIMIT ?")
                            .params(last.get(), limit)
                            .query(NotificationStore::row)
                            .list();
                    int done = rows.isEmpty() ? 0 : sender.send(rows);
                    if (done > 0) {
                        sql.sql("UPDATE webhook_cursor SET last_id = ? WHERE destination = ?")
                                .params(rows.get(done - 1).id(), destination)
                                .update();
                    }
                    return true;
                }));
    }

    /** Records a delivery given up; in the sender's transaction, so that the cursor and the record move together. */
    public void failed(Notification n, String destination, int attempts, String error, Instant now) {
        StoreException.during(
                "recording an undelivered notification",
                () -> sql.sql(
                                "INSERT INTO webhook_failure (notification_id, destination, cluster, kind, attempts, error, failed_at) "
                                        + "VALUES (?, ?, ?, ?, ?, ?, ?)")
                        .params(n.id(), destination, n.cluster(), n.kind(), attempts, error, Timestamp.from(now))
                        .update());
    }

    /** Deliveries given up, newest first, of one cluster or (null) all. */
    public List<Failure> failures(String cluster, int limit) {
        return StoreException.during(
                "reading undelivered notifications",
                () -> sql.sql(
                                "SELECT id, notification_id, destination, cluster, kind, attempts, error, failed_at FROM webhook_failure "
                                        + (cluster == null ? "" : "WHERE cluster = ? ") + "ORDER BY id DESC LIMIT ?")
                        .params(cluster == null ? List.of(limit) : List.of(cluster, limit))
                        .query((rs, n) -> new Failure(
                                rs.getLong(1),
                                rs.getLong(2),
                                rs.getString(3),
                                rs.getString(4),
                                rs.getString(5),
                                rs.getInt(6),
                                rs.getString(7),
                                rs.getTimestamp(8).toInstant()))
                        .list());
    }

    /** The newest notifications, newest first (what the triggers wrote; the tests read it). */
    public List<Notification> newest(int limit) {
        return StoreException.during(
                "reading notifications",
                () -> sql.sql(
                                "SELECT id, at, kind, cluster, version, node, detail FROM notification ORDER BY id DESC LIMIT ?")
                        .param(limit)
                        .query(NotificationStore::row)
                        .list());
    }

    /** Removes notifications older than {@code before}: they were sent, or nobody was listening. */
    public int prune(Instant before) {
        return StoreException.during(
                "removing old notifications",
                () -> sql.sql("DELETE FROM notification WHERE at < ?")
                        .param(Timestamp.from(before))
                        .update());
    }

    private static Notification row(ResultSet rs, int n) throws SQLException {
        long version = rs.getLong(5);
        Long v = rs.wasNull() ? null : version;
        return new Notification(
                rs.getLong(1),
                rs.getTimestamp(2).toInstant(),
                rs.getString(3),
                rs.getString(4),
                v,
                rs.getString(6),
                rs.getString(7));
    }
}
