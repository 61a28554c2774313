package io.rulesync.compiler.store;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.EventCodec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The api's side of {@code operator_action}: recording a request (and, in the same transaction, the
 * outbox message that carries it to the compiler through the events topic), and reading the audit
 * log. The compiler completes requests in its batch transaction ({@link VersionStore#commit}).
 */
public final class OperatorActionStore {
    private final DataSource ds;

    public OperatorActionStore(DataSource ds) {
        this.ds = ds;
    }

    /**
     * Records a rollback to {@code toVersion} (or, when it is null, a resume) and queues it for the
     * compiler on {@code eventsTopic}. Returns the action's id.
     *
     * @throws ActionConflictException another action of this cluster is still pending
     */
    public long request(String cluster, Long toVersion, String actor, String reason, Instant now, String eventsTopic)
            throws ActionConflictException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                long id;
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO operator_action (cluster, action, to_version, "
                        + "actor, reason, requested_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id")) {
                    ps.setString(1, cluster);
                    ps.setString(2, toVersion == null ? "resume" : "rollback");
                    if (toVersion == null) {
                        ps.setNull(3, Types.BIGINT);
                    } else {
                        ps.setLong(3, toVersion);
                    }
                    ps.setString(4, actor);
                    ps.setString(5, reason);
                    ps.setTimestamp(6, Timestamp.from(now));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        id = rs.getLong(1);
                    }
                }
                // Validated by the event's constructor, so nothing unusable reaches the topic.
                ClusterEvent event = toVersion == null
                        ? new ResumeRequested(cluster, id, actor, reason, now)
                        : new RollbackRequested(cluster, id, toVersion, actor, reason, now);
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO outbox (topic, record_key, payload, created_at) VALUES (?, ?, ?, ?)")) {
                    ps.setString(1, eventsTopic);
                    ps.setString(2, cluster);
                    ps.setString(3, EventCodec.encode(event));
                    ps.setTimestamp(4, Timestamp.from(now));
                    ps.executeUpdate();
                }
                c.commit();
                return id;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                if (e instanceof SQLException sql && "23505".equals(sql.getSQLState())) {
                    long pending = pendingOf(cluster).map(RecordedAction::id).orElse(0L);
                    throw new ActionConflictException("action " + pending + " of cluster " + cluster
                            + " is still pending; retry once it completed", pending);
                }
                throw e;
            }
        } catch (SQLException e) {
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
        String sql = "UPDATE operator_action SET status = 'expired', outcome = ?, completed_at = ? WHERE status = 'pending' "
                + "AND requested_at < ?" + (cluster == null ? "" : " AND cluster = ?") + " RETURNING " + RecordedAction.COLUMNS;
        List<RecordedAction> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, outcome);
            ps.setTimestamp(2, Timestamp.from(now));
            ps.setTimestamp(3, Timestamp.from(cutoff));
            if (cluster != null) {
                ps.setString(4, cluster);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(RecordedAction.read(rs));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("expiring operator actions failed", e);
        }
        return out;
    }

    /** Why an action expired after {@code timeout}, as the audit log shows it. */
    public static String expiredOutcome(java.time.Duration timeout) {
        return "not carried out within " + timeout.toString().substring(2).toLowerCase()
                + ": no compiler took the request (none was running, or the request was lost when the events log was"
                + " replaced); request it again if it is still wanted";
    }

    public Optional<RecordedAction> find(long id) {
        return one("WHERE id = ?", id);
    }

    /** The action of a cluster that is still pending, if any. */
    public Optional<RecordedAction> pendingOf(String cluster) {
        return one("WHERE cluster = ? AND status = 'pending'", cluster);
    }

    /** Up to {@code limit} actions with ids below {@code before}, newest first; of one cluster unless it is null. */
    public List<RecordedAction> list(String cluster, long before, int limit) {
        String sql = "SELECT " + RecordedAction.COLUMNS + " FROM operator_action WHERE id < ?"
                + (cluster == null ? "" : " AND cluster = ?") + " ORDER BY id DESC LIMIT ?";
        List<RecordedAction> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setLong(i++, before);
            if (cluster != null) {
                ps.setString(i++, cluster);
            }
            ps.setInt(i, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(RecordedAction.read(rs));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading operator actions failed", e);
        }
        return out;
    }

    private Optional<RecordedAction> one(String where, Object arg) {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT " + RecordedAction.COLUMNS + " FROM operator_action " + where)) {
            ps.setObject(1, arg);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(RecordedAction.read(rs)) : Optional.empty();
            }
        } catch (SQLException e) {
            throw new StoreException("reading operator actions failed", e);
        }
    }
}
