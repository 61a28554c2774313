package io.rulesync.store;

import io.rulesync.model.ack.NodeAck;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * PostgreSQL storage of what every node runs, from the agents' acks (table {@code node_status}, see
 * its migration for what the columns mean). Newest ack per node wins, by the ack's own time, so
 * redelivered or reordered acks never move a node backwards.
 */
public final class NodeStatusStore {
    private static final String UPSERT = "INSERT INTO node_status AS s (cluster, node, running, last_version, "
            + "last_status, last_error, last_error_version, last_error_at, duration_ms, rule_count, mode, acked_at, updated_at) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now()) "
            + "ON CONFLICT (cluster, node) DO UPDATE SET running = EXCLUDED.running, last_version = EXCLUDED.last_version, "
            + "last_status = EXCLUDED.last_status, "
            // A failure in this batch replaces the stored one only if it is newer than what is stored.
            + "last_error = CASE WHEN EXCLUDED.last_error_at > s.acked_at THEN EXCLUDED.last_error ELSE s.last_error END, "
            + "last_error_version = CASE WHEN EXCLUDED.last_error_at > s.acked_at THEN EXCLUDED.last_error_version "
            + "  ELSE s.last_error_version END, "
            + "last_error_at = CASE WHEN EXCLUDED.last_error_at > s.acked_at THEN EXCLUDED.last_error_at ELSE s.last_error_at END, "
            + "duration_ms = EXCLUDED.duration_ms, rule_count = EXCLUDED.rule_count, mode = EXCLUDED.mode, "
            + "acked_at = EXCLUDED.acked_at, updated_at = EXCLUDED.updated_at "
            + "WHERE s.acked_at < EXCLUDED.acked_at";

    private final JdbcTemplate jdbc;
    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public NodeStatusStore(DataSource ds) {
        this.jdbc = new JdbcTemplate(ds);
        this.sql = JdbcClient.create(jdbc);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /** Stores a batch of acks in one transaction; for each node only acks newer than the stored one count. */
    public void recordAcks(List<NodeAck> acks) {
        if (acks.isEmpty()) {
            return;
        }
        List<NodeOutcome> outcomes = newestPerNode(acks);
        StoreException.during("recording " + acks.size() + " node acks", () -> tx.execute(status ->
                jdbc.batchUpdate(UPSERT, outcomes, outcomes.size(), (ps, o) -> {
                    NodeAck a = o.newest();
                    NodeAck f = o.lastFailure();
                    ps.setString(1, a.cluster());
                    ps.setString(2, a.node());
                    ps.setLong(3, a.running());
                    ps.setLong(4, a.version());
                    ps.setString(5, a.status().name());
                    ps.setString(6, f == null ? null : f.error());
                    if (f == null) {
                        ps.setNull(7, Types.BIGINT);
                        ps.setNull(8, Types.TIMESTAMP_WITH_TIMEZONE);
                    } else {
                        ps.setLong(7, f.version());
                        ps.setObject(8, utc(f.at()));
                    }
                    ps.setLong(9, a.durationMs());
                    ps.setInt(10, a.ruleCount());
                    ps.setString(11, a.mode());
                    ps.setObject(12, utc(a.at()));
                })));
    }

    /** The status of every node of a cluster that has acked, by node name. */
    public List<NodeStatus> nodeStatus(String cluster) {
        return statuses("WHERE cluster = ? ORDER BY node", List.of(cluster), cluster);
    }

    /** The status of these nodes of a cluster (those that have acked), by node name. */
    public List<NodeStatus> nodeStatus(String cluster, Collection<String> nodes) {
        return nodes.isEmpty() ? List.of() : statuses("WHERE cluster = ? AND node = ANY (?) ORDER BY node",
                List.of(cluster, new SqlArrayValue("text", nodes.toArray())), cluster);
    }

    /** Every acked node's progress, by node name: what a count or a state filter needs, and no more. */
    public List<NodeProgress> progress(String cluster) {
        return StoreException.during("reading the node progress of " + cluster, () -> sql
                .sql("SELECT node, running, last_status = 'FAILED' FROM node_status WHERE cluster = ? ORDER BY node")
                .param(cluster)
                .query((rs, n) -> new NodeProgress(rs.getString(1), rs.getLong(2), rs.getBoolean(3)))
                .list());
    }

    private List<NodeStatus> statuses(String where, List<?> args, String cluster) {
        return StoreException.during("reading the node status of " + cluster, () -> sql
                .sql("SELECT cluster, node, running, last_version, last_status, last_error, last_error_version, last_error_at, "
                        + "duration_ms, rule_count, mode, acked_at, updated_at FROM node_status " + where)
                .params(args)
                .query((rs, n) -> {
                    long version = rs.getLong(7);
                    Long errorVersion = rs.wasNull() ? null : version;
                    return new NodeStatus(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4),
                            NodeAck.Status.valueOf(rs.getString(5)), rs.getString(6), errorVersion,
                            instant(rs, 8), rs.getLong(9), rs.getInt(10), rs.getString(11), instant(rs, 12), instant(rs, 13));
                })
                .list());
    }

    /** What one batch says about one node: its newest ack, and its newest failure (null if none). */
    record NodeOutcome(NodeAck newest, NodeAck lastFailure) {
    }

    /**
     * One row per node, so that the batch upsert never touches a row twice (PostgreSQL refuses that
     * when the driver rewrites a batch into one multi-row INSERT). Equal times: the later in the list,
     * that is in log order, wins.
     */
    static List<NodeOutcome> newestPerNode(List<NodeAck> acks) {
        Map<List<String>, NodeOutcome> byNode = new LinkedHashMap<>();
        for (NodeAck a : acks) {
            byNode.merge(List.of(a.cluster(), a.node()),
                    new NodeOutcome(a, a.status() == NodeAck.Status.FAILED ? a : null),
                    (old, now) -> new NodeOutcome(newer(old.newest(), a), newer(old.lastFailure(), now.lastFailure())));
        }
        return new ArrayList<>(byNode.values());
    }

    private static NodeAck newer(NodeAck a, NodeAck b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return b.at().isBefore(a.at()) ? a : b;
    }

    private static OffsetDateTime utc(Instant t) {
        return OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        // A Timestamp, not an OffsetDateTime: the driver builds zone rules for every OffsetDateTime it returns.
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
