package io.rulesync.store;

import io.rulesync.model.event.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;

/**
 * Every node's labels as they are now (table {@code cluster_node_label}): what a rollout wave's label selector is
 * matched against. The compiler writes them, with the batch that changed them ({@link BatchStore#commit}) and on
 * taking a partition ({@link #reconcile}); the api reads them.
 */
public final class NodeLabelStore implements PartitionStore.Labels {
    private static final TypeReference<TreeMap<String, String>> LABELS = new TypeReference<>() {};

    private final JdbcTemplate jdbc;
    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public NodeLabelStore(DataSource ds) {
        this.jdbc = new JdbcTemplate(ds);
        this.sql = JdbcClient.create(jdbc);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /** The rows that take a cluster's stored labels from {@code before} to {@code after} (node to labels), by node. */
    public static List<Batch.NodeLabelRow> changes(
            String cluster,
            Map<String, ? extends Map<String, String>> before,
            Map<String, ? extends Map<String, String>> after) {
        TreeSet<String> nodes = new TreeSet<>(before.keySet());
        nodes.addAll(after.keySet());
        List<Batch.NodeLabelRow> out = new ArrayList<>();
        for (String node : nodes) {
            Map<String, String> now = after.get(node);
            if (!Objects.equals(before.get(node), now)) {
                out.add(new Batch.NodeLabelRow(cluster, node, now == null ? null : new TreeMap<>(now)));
            }
        }
        return out;
    }

    /** A cluster's nodes and their labels, by node name (empty for a cluster never stored). */
    public SortedMap<String, Map<String, String>> labels(String cluster) {
        SortedMap<String, Map<String, String>> out = new TreeMap<>();
        StoreException.during(
                "reading the node labels of " + cluster,
                () -> sql.sql("SELECT node, labels::text FROM cluster_node_label WHERE cluster = ?")
                        .param(cluster)
                        .query((rs, n) -> out.put(rs.getString(1), Json.MAPPER.readValue(rs.getString(2), LABELS)))
                        .list());
        return out;
    }

    /**
     * Makes the stored labels of {@code cluster} those of {@code nodes}, in one transaction; returns how many nodes' rows
     * it changed (0 when the table already agreed).
     */
    public int reconcile(String cluster, Map<String, ? extends Map<String, String>> nodes) {
        return StoreException.during(
                "reconciling the node labels of " + cluster,
                () -> tx.execute(status -> {
                    List<Batch.NodeLabelRow> rows = changes(cluster, labels(cluster), nodes);
                    write(jdbc, rows);
                    return rows.size();
                }));
    }

    /** Writes {@code rows} on {@code jdbc}, in the caller's transaction. */
    static void write(JdbcTemplate jdbc, List<Batch.NodeLabelRow> rows) {
        List<Batch.NodeLabelRow> gone =
                rows.stream().filter(r -> r.labels() == null).toList();
        List<Batch.NodeLabelRow> set =
                rows.stream().filter(r -> r.labels() != null).toList();
        if (!gone.isEmpty()) {
            jdbc.batchUpdate(
                    "DELETE FROM cluster_node_label WHERE cluster = ? AND node = ?", gone, gone.size(), (ps, r) -> {
                        ps.setString(1, r.cluster());
                        ps.setString(2, r.node());
                    });
        }
        if (!set.isEmpty()) {
            jdbc.batchUpdate(
                    "INSERT INTO cluster_node_label (cluster, node, labels) VALUES (?, ?, ?::jsonb) "
                            + "ON CONFLICT (cluster, node) DO UPDATE SET labels = EXCLUDED.labels",
                    set,
                    set.size(),
                    (ps, r) -> {
                        ps.setString(1, r.cluster());
                        ps.setString(2, r.node());
                        ps.setString(3, Json.MAPPER.writeValueAsString(r.labels()));
                    });
        }
    }
}
