package io.rulesync.compiler.store;

import io.rulesync.model.ack.NodeAck;
import java.sql.Connection;
import java.sql.PreparedStatement;
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

    private final DataSource ds;

    public NodeStatusStore(DataSource ds) {
        this.ds = ds;
    }

    /** Stores a batch of acks in one transaction; for each node only acks newer than the stored one count. */
    public void recordAcks(List<NodeAck> acks) {
        if (acks.isEmpty()) {
            return;
        }
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(UPSERT)) {
                for (NodeOutcome o : newestPerNode(acks)) {
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
                    ps.addBatch();
                }
                ps.executeBatch();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("recording " + acks.size() + " node acks failed", e);
        }
    }

    /** The status of every node of a cluster that has acked, by node name. */
    public List<NodeStatus> nodeStatus(String cluster) {
        return statuses("WHERE cluster = ? ORDER BY node", cluster);
    }

    /** The status of these nodes of a cluster (those that have acked), by node name. */
    public List<NodeStatus> nodeStatus(String cluster, Collection<String> nodes) {
        return nodes.isEmpty() ? List.of() : statuses("WHERE cluster = ? AND node = ANY (?) ORDER BY node", cluster, nodes);
    }

    /** Every acked node's progress, by node name: what a count or a state filter needs, and no more. */
    public List<NodeProgress> progress(String cluster) {
        List<NodeProgress> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT node, running, last_status = 'FAILED' FROM node_status "
                        + "WHERE cluster = ? ORDER BY node")) {
            ps.setString(1, cluster);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new NodeProgress(rs.getString(1), rs.getLong(2), rs.getBoolean(3)));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading the node progress of " + cluster + " failed", e);
        }
        return out;
    }

    private List<NodeStatus> statuses(String where, String cluster, Collection<String> nodes) {
        List<NodeStatus> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT cluster, node, running, last_version, last_status, "
                        + "last_error, last_error_version, last_error_at, duration_ms, rule_count, mode, acked_at, updated_at "
                        + "FROM node_status " + where)) {
            ps.setString(1, cluster);
            if (nodes != null) {
                ps.setArray(2, c.createArrayOf("text", nodes.toArray()));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long version = rs.getLong(7);
                    Long errorVersion = rs.wasNull() ? null : version;
                    out.add(new NodeStatus(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4),
                            NodeAck.Status.valueOf(rs.getString(5)), rs.getString(6), errorVersion,
                            instant(rs, 8), rs.getLong(9), rs.getInt(10), rs.getString(11), instant(rs, 12), instant(rs, 13)));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading the node status of " + cluster + " failed", e);
        }
        return out;
    }

    private List<NodeStatus> statuses(String where, String cluster) {
        return statuses(where, cluster, null);
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
