package io.rulesync.store;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.EventCodec;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The api's side of {@code operator_action}: recording a request (and, in the same transaction, the
 * outbox message that carries it to the compiler through the events topic), and reading the audit
 * log. The compiler completes requests in its batch transaction ({@link BatchStore#commit}).
 */
public final class OperatorActionStore {
    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public OperatorActionStore(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /**
     * Records a rollback to {@code toVersion} (or, when it is null, a resume) and queues it for the
     * compiler on {@code eventsTopic}. Returns the action's id.
     *
     * @throws ActionConflictException another action of this cluster is still pending
     */
    public long request(String cluster, Long toVersion, String actor, String reason, Instant now, String eventsTopic)
            throws ActionConflictException {
        try {
            return tx.execute(status -> {
                long id = sql.sql(
                                "INSERT INTO operator_action (cluster, action, to_version, actor, reason, requested_at) "
                                        + "VALUES (?, ?, ?, ?, ?, ?) RETURNING id")
                        .params(
                                cluster,
                                toVersion == null ? "resume" : "rollback",
                                new SqlParameterValue(Types.BIGINT, toVersion),
                                actor,
                                reason,
                                Timestamp.from(now))
                        .query(Long.class)
                        .single();
                // Validated by the event's constructor, so nothing unusable reaches the topic.
                ClusterEvent event = toVersion == null
                        ? new ResumeRequested(cluster, id, actor, reason, now)
                        : new RollbackRequested(cluster, id, toVersion, actor, reason, now);
                sql.sql("INSERT INTO outbox (topic, record_key, payload, created_at) VALUES (?, ?, ?, ?)")
                        .params(eventsTopic, cluster, EventCodec.encode(event), Timestamp.from(now))
                        .update();
                return id;
            });
        } catch (DataAccessException e) {
            if (StoreException.uniqueViolation(e)) {
                long pending = pendingOf(cluster).map(RecordedAction::id).orElse(0L);
                throw new ActionConflictException(
                        "action " + pending + " of cluster " + cluster + " is still pending; retry once it completed",
                        pending);
            }
            throw new StoreException("recording an operator action of " + cluster + " failed", e);
        } catch (TransactionException e) {
            throw new StoreException("recording an operator action of " + cluster + " failed", e);
        }
    }

    /**
     * Marks every action (of {@code cluster}, or of all clusters when it is null) still pending that
     * was requested before {@code cutoff} as expired, with {@code outcome} saying why, and returns
     * them. Safe against the compiler completing the same action at the same moment: only a row
     * still pending changes, and the compiler's own update requires it to be pending.
     */
    public List<RecordedAction> expire(String cluster, Instant cutoff, Instant now, String outcome) {
        List<Object> args = new ArrayList<>(List.of(outcome, Timestamp.from(now), Timestamp.from(cutoff)));
        if (cluster != null) {
            args.add(cluster);
        }
        return StoreException.during(
                "expiring operator actions",
                () -> sql.sql(
                                "UPDATE operator_action SET status = 'expired', outcome = ?, completed_at = ? WHERE status = 'pending' "
                                        + "AND requested_at < ?" + (cluster == null ? "" : " AND cluster = ?")
                                        + " RETURNING " + RecordedAction.COLUMNS)
                        .params(args)
                        .query((rs, n) -> RecordedAction.read(rs))
                        .list());
    }

    /** Why an action expired after {@code timeout}, as the audit log shows it. */
    public static String expiredOutcome(Duration timeout) {
        return "not carried out within " + timeout.toString().substring(2).toLowerCase()
                + ": no compiler took the request (none was running, or the request was lost when the events log was"
                + " replaced); request it again if it is still wanted";
    }

    public Optional<RecordedAction> find(long id) {
        return one("WHERE id = ?", id);
    }

    /** The action of a cluster that is still pending, if any. */
    /** The newest version after {@code after}, up to {@code upTo}, that a rollback of {@code cluster} made; 0 when none did. */
    public long newestRollbackVersion(String cluster, long after, long upTo) {
        return StoreException.during(
                "reading the rollbacks of " + cluster,
                () -> sql.sql(
                                "SELECT coalesce(max(result_version), 0) FROM operator_action WHERE cluster = ? AND status = 'done' "
                                        + "AND action = 'rollback' AND result_version > ? AND result_version <= ?")
                        .params(cluster, after, upTo)
                        .query(Long.class)
                        .single());
    }

    public Optional<RecordedAction> pendingOf(String cluster) {
        return one("WHERE cluster = ? AND status = 'pending'", cluster);
    }

    /** Up to {@code limit} actions with ids below {@code before}, newest first; of one cluster unless it is null. */
    public List<RecordedAction> list(String cluster, long before, int limit) {
        List<Object> args = new ArrayList<>(List.of(before));
        if (cluster != null) {
            args.add(cluster);
        }
        args.add(limit);
        return StoreException.during(
                "reading operator actions",
                () -> sql.sql("SELECT " + RecordedAction.COLUMNS + " FROM operator_action WHERE id < ?"
                                + (cluster == null ? "" : " AND cluster = ?") + " ORDER BY id DESC LIMIT ?")
                        .params(args)
                        .query((rs, n) -> RecordedAction.read(rs))
                        .list());
    }

    private Optional<RecordedAction> one(String where, Object arg) {
        return StoreException.during(
                "reading operator actions",
                () -> sql.sql("SELECT " + RecordedAction.COLUMNS + " FROM operator_action " + where)
                        .param(arg)
                        .query((rs, n) -> RecordedAction.read(rs))
                        .optional());
    }
}
