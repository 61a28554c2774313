package io.rulesync.store;

import io.rulesync.model.ack.NodeAck;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * PostgreSQL storage of what every node runs, from the agents' acks (table {@code node_status}, see
 * its migration for what the columns mean). Newest ack per node wins, by the ack's own time, so
 * redelivered or reordered acks never move a node backwards.
 */
public final class NodeStatusStore {
    /**
     * Every node of a batch in one statement, its columns as arrays: a thousand nodes acking one version are one
     * statement for PostgreSQL to plan and run, not a thousand (each row as a statement of a JDBC batch cost it about
     * 70 µs; see BENCHMARKS.md, "Fan-out").
     */
    private static final String UPSERT = "INSERT INTO node_status AS s (cluster, node, running, last_version, "
            + "last_status, last_error, last_error_version, last_error_at, duration_ms, rule_count, mode, acked_at, updated_at) "
            + "SELECT u.*, now() FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], "
            + "?::timestamptz[], ?::bigint[], ?::integer[], ?::text[], ?::timestamptz[]) AS u "
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

    public NodeStatusStore(DataSource ds) {
        this.jdbc = new JdbcTemplate(ds);
        this.sql = JdbcClient.create(jdbc);
    }

    /** Stores a batch of acks in one transaction; for each node only acks newer than the stored one count. */
    public void recordAcks(List<NodeAck> acks) {
        if (acks.isEmpty()) {
            return;
        }
        List<NodeOutcome> outcomes = newestPerNode(acks);
        int n = outcomes.size();
        String[] cluster = new String[n];
        String[] node = new String[n];
        Long[] running = new Long[n];
        Long[] version = new Long[n];
        String[] status = new String[n];
        String[] error = new String[n];
        Long[] errorVersion = new Long[n];
        String[] errorAt = new String[n];
        Long[] duration = new Long[n];
        Integer[] rules = new Integer[n];
        String[] mode = new String[n];
        String[] at = new String[n];
        for (int i = 0; i < n; i++) {
            NodeAck a = outcomes.get(i).newest();
            NodeAck f = outcomes.get(i).lastFailure();
            cluster[i] = a.cluster();
            node[i] = a.node();
            running[i] = a.running();
            version[i] = a.version();
            status[i] = a.status().name();
            error[i] = f == null ? null : f.error();
            errorVersion[i] = f == null ? null : f.version();
            errorAt[i] = f == null ? null : f.at().toString(); // ISO-8601 in UTC: PostgreSQL reads it as it is
            duration[i] = a.durationMs();
            rules[i] = a.ruleCount();
            mode[i] = a.mode();
            at[i] = a.at().toString();
        }
        StoreException.during("recording " + acks.size() + " node acks", () -> jdbc.update(UPSERT, ps -> {
            java.sql.Connection c = ps.getConnection();
            ps.setArray(1, c.createArrayOf("text", cluster));
            ps.setArray(2, c.createArrayOf("text", node));
            ps.setArray(3, c.createArrayOf("bigint", running));
            ps.setArray(4, c.createArrayOf("bigint", version));
            ps.setArray(5, c.createArrayOf("text", status));
            ps.setArray(6, c.createArrayOf("text", error));
            ps.setArray(7, c.createArrayOf("bigint", errorVersion));
            ps.setArray(8, c.createArrayOf("text", errorAt));
            ps.setArray(9, c.createArrayOf("bigint", duration));
            ps.setArray(10, c.createArrayOf("integer", rules));
            ps.setArray(11, c.createArrayOf("text", mode));
            ps.setArray(12, c.createArrayOf("text", at));
        }));
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


    private static Instant instant(ResultSet rs, int column) throws SQLException {
        // A Timestamp, not an OffsetDateTime: the driver builds zone rules for every OffsetDateTime it returns.
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
