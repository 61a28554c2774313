package io.rulesync.store;

import io.rulesync.model.ack.NodeAck;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.SqlArrayValue;

/**
 * PostgreSQL storage of what every node runs, from the agents' acks (table {@code node_status}, see
 * its migration for what the columns mean).
 *
 * <p>The api's clock decides, never the node's: a node's acks are ordered by the version they are about, then by when
 * the api stored them ({@code updated_at}, PostgreSQL's {@code now()}). The ack's own {@code at} is kept for display
 * only ({@code acked_at}). So a node whose clock is hours off is shown correctly, and an ack dated in the year 9999
 * cannot freeze a node: the next version's ack replaces it. Redelivered or reordered acks of an older version never move
 * a node backwards.
 */
public final class NodeStatusStore {
    /** Whether this batch's failure replaces the stored one: unless the stored one is about a newer version. */
    private static final String NEWER_FAILURE = "EXCLUDED.last_error_version IS NOT NULL "
            + "AND (s.last_error_version IS NULL OR EXCLUDED.last_error_version >= s.last_error_version)";

    /**
     * Every node of a batch in one statement, its columns as arrays: a thousand nodes acking one version are one
     * statement for PostgreSQL to plan and run, not a thousand (each row as a statement of a JDBC batch cost it about
     * 70 µs; see BENCHMARKS.md, "Fan-out").
     */
    private static final String UPSERT = "INSERT INTO node_status AS s (cluster, node, running, last_version, "
            + "last_status, last_error, last_error_version, last_error_at, duration_ms, rule_count, mode, acked_at, updated_at) "
            // last_error_at and updated_at are the api's time (the database's clock), never the node's.
            + "SELECT u.cluster, u.node, u.running, u.last_version, u.last_status, u.last_error, u.last_error_version, "
            + "CASE WHEN u.last_error IS NULL THEN NULL ELSE now() END, u.duration_ms, u.rule_count, u.mode, u.acked_at, now() "
            + "FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], "
            + "?::bigint[], ?::integer[], ?::text[], ?::timestamptz[]) "
            + "AS u(cluster, node, running, last_version, last_status, last_error, last_error_version, duration_ms, rule_count, "
            + "mode, acked_at) "
            + "ON CONFLICT (cluster, node) DO UPDATE SET running = EXCLUDED.running, last_version = EXCLUDED.last_version, "
            + "last_status = EXCLUDED.last_status, "
            // A failure in this batch replaces the stored one unless the stored one is about a newer version.
            + "last_error = CASE WHEN " + NEWER_FAILURE + " THEN EXCLUDED.last_error ELSE s.last_error END, "
            + "last_error_version = CASE WHEN " + NEWER_FAILURE
            + " THEN EXCLUDED.last_error_version ELSE s.last_error_version END, "
            + "last_error_at = CASE WHEN " + NEWER_FAILURE + " THEN EXCLUDED.last_error_at ELSE s.last_error_at END, "
            + "duration_ms = EXCLUDED.duration_ms, rule_count = EXCLUDED.rule_count, mode = EXCLUDED.mode, "
            + "acked_at = EXCLUDED.acked_at, updated_at = EXCLUDED.updated_at "
            // By version, then by the api's time: an ack of the same version stored later (a restarted agent's) wins.
            + "WHERE s.last_version <= EXCLUDED.last_version";

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
            duration[i] = a.durationMs();
            rules[i] = a.ruleCount();
            mode[i] = a.mode();
            at[i] = a.at().toString(); // ISO-8601 in UTC: PostgreSQL reads it as it is
        }
        StoreException.during(
                "recording " + acks.size() + " node acks",
                () -> jdbc.update(UPSERT, ps -> {
                    java.sql.Connection c = ps.getConnection();
                    ps.setArray(1, c.createArrayOf("text", cluster));
                    ps.setArray(2, c.createArrayOf("text", node));
                    ps.setArray(3, c.createArrayOf("bigint", running));
                    ps.setArray(4, c.createArrayOf("bigint", version));
                    ps.setArray(5, c.createArrayOf("text", status));
                    ps.setArray(6, c.createArrayOf("text", error));
                    ps.setArray(7, c.createArrayOf("bigint", errorVersion));
                    ps.setArray(8, c.createArrayOf("bigint", duration));
                    ps.setArray(9, c.createArrayOf("integer", rules));
                    ps.setArray(10, c.createArrayOf("text", mode));
                    ps.setArray(11, c.createArrayOf("text", at));
                }));
    }

    /** The status of every node of a cluster that has acked, by node name. */
    public List<NodeStatus> nodeStatus(String cluster) {
        return statuses("WHERE cluster = ? ORDER BY node", List.of(cluster), cluster);
    }

    /** The status of these nodes of a cluster (those that have acked), by node name. */
    public List<NodeStatus> nodeStatus(String cluster, Collection<String> nodes) {
        return nodes.isEmpty()
                ? List.of()
                : statuses(
                        "WHERE cluster = ? AND node = ANY (?) ORDER BY node",
                        List.of(cluster, new SqlArrayValue("text", nodes.toArray())),
                        cluster);
    }

    /** Every acked node's progress, by node name: what a count or a state filter needs, and no more. */
    public List<NodeProgress> progress(String cluster) {
        return StoreException.during(
                "reading the node progress of " + cluster,
                () -> sql.sql(
                                "SELECT node, running, last_status = 'FAILED' FROM node_status WHERE cluster = ? ORDER BY node")
                        .param(cluster)
                        .query((rs, n) -> new NodeProgress(rs.getString(1), rs.getLong(2), rs.getBoolean(3)))
                        .list());
    }

    private List<NodeStatus> statuses(String where, List<?> args, String cluster) {
        return StoreException.during(
                "reading the node status of " + cluster,
                () -> sql.sql(
                                "SELECT cluster, node, running, last_version, last_status, last_error, last_error_version, last_error_at, "
                                        + "duration_ms, rule_count, mode, acked_at, updated_at FROM node_status "
                                        + where)
                        .params(args)
                        .query((rs, n) -> {
                            long version = rs.getLong(7);
                            Long errorVersion = rs.wasNull() ? null : version;
                            return new NodeStatus(
                                    rs.getString(1),
                                    rs.getString(2),
                                    rs.getLong(3),
                                    rs.getLong(4),
                                    NodeAck.Status.valueOf(rs.getString(5)),
                                    rs.getString(6),
                                    errorVersion,
                                    instant(rs, 8),
                                    rs.getLong(9),
                                    rs.getInt(10),
                                    rs.getString(11),
                                    instant(rs, 12),
                                    instant(rs, 13));
                        })
                        .list());
    }

    /** What one batch says about one node: its newest ack, and its newest failure (null if none). */
    record NodeOutcome(NodeAck newest, NodeAck lastFailure) {}

    /**
     * One row per node, so that the batch upsert never touches a row twice (PostgreSQL refuses that). A node's acks in
     * one batch are ordered as the table orders them: by version, then by arrival (the later in the list wins a tie).
     */
    static List<NodeOutcome> newestPerNode(List<NodeAck> acks) {
        Map<List<String>, NodeOutcome> byNode = new LinkedHashMap<>();
        for (NodeAck a : acks) {
            byNode.merge(
                    List.of(a.cluster(), a.node()),
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
        return b.version() < a.version() ? a : b;
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        // A Timestamp, not an OffsetDateTime: the driver builds zone rules for every OffsetDateTime it returns.
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
