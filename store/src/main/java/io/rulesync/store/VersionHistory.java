package io.rulesync.store;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Reads the stored versions back (written by {@link BatchStore#commit}): heads, version metadata,
 * the rules and nodes of a cluster at a version, and the rollback that pins a cluster. What the
 * api serves, and what the compiler rebuilds a cluster's head from.
 */
public final class VersionHistory implements PartitionStore.Versions {
    private final JdbcClient sql;
    /** Reads that take several statements and must see one state of the history (retention may prune meanwhile). */
    private final TransactionTemplate snapshotRead;

    public VersionHistory(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.snapshotRead = new TransactionTemplate(new DataSourceTransactionManager(ds));
        snapshotRead.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        snapshotRead.setReadOnly(true);
    }

    /** One version's metadata. */
    public record VersionInfo(
            String cluster,
            long seq,
            Instant createdAt,
            String cause,
            String settings,
            int fragmentsChanged,
            int nodesChanged,
            String lineage) {}

    /** The latest version of a cluster; 0 when it has none. */
    public long head(String cluster) {
        return StoreException.during(
                "reading the head of " + cluster,
                () -> sql.sql("SELECT seq FROM cluster_head WHERE cluster = ?")
                        .param(cluster)
                        .query(Long.class)
                        .optional()
                        .orElse(0L));
    }

    /** The {@link io.rulesync.model.rules.Lineage} of a stored version; empty when it is not stored. */
    public Optional<String> lineage(String cluster, long seq) {
        return StoreException.during(
                "reading the lineage of " + cluster + " at " + seq,
                () -> sql.sql("SELECT lineage FROM version WHERE cluster = ? AND seq = ?")
                        .params(cluster, seq)
                        .query(String.class)
                        .optional());
    }

    /** A cluster's oldest stored version: 1 unless retention removed older ones ({@link HistoryPruning}); 0 when it has none. */
    public long oldest(String cluster) {
        return StoreException.during(
                "reading the oldest version of " + cluster,
                () -> sql.sql("SELECT coalesce(min(seq), 0) FROM version WHERE cluster = ?")
                        .param(cluster)
                        .query(Long.class)
                        .single());
    }

    /** Every cluster and its newest version, by cluster id. */
    public SortedMap<String, Long> heads() {
        SortedMap<String, Long> out = new TreeMap<>();
        StoreException.during(
                "reading the heads",
                () -> sql.sql("SELECT cluster, seq FROM cluster_head")
                        .query((rs, n) -> out.put(rs.getString(1), rs.getLong(2)))
                        .list());
        return out;
    }

    /** The rollback that pins a cluster: its latest done action, when that is a rollback. */
    public Optional<RecordedAction> pinning(String cluster) {
        return StoreException.during(
                        "reading the actions of " + cluster,
                        () -> sql.sql("SELECT " + RecordedAction.COLUMNS
                                        + " FROM operator_action WHERE cluster = ? AND status = 'done' "
                                        + "ORDER BY result_version DESC LIMIT 1")
                                .param(cluster)
                                .query((rs, n) -> RecordedAction.read(rs))
                                .optional())
                .filter(a -> "rollback".equals(a.action()));
    }

    /**
     * The rules of every node of a cluster at a version, read back from the stored changes: for the head,
     * from the head's entries ({@code cluster_head_entry}); for an older version, as the latest entry of
     * each key at or before it, which costs more the longer the history.
     */
    public ClusterRules rules(String cluster, long seq) {
        Map<FragmentKey, String> hashes = new TreeMap<>();
        // One statement, so one snapshot: a row (the head's, with or without entries) only when seq is the head.
        boolean head = StoreException.during(
                                "reading the rules of " + cluster + " at " + seq,
                                () -> sql.sql(
                                                "SELECT e.family, e.unit, e.variant, e.hash FROM cluster_head h LEFT JOIN cluster_head_entry e "
                                                        + "ON e.cluster = h.cluster WHERE h.cluster = ? AND h.seq = ?")
                                        .params(cluster, seq)
                                        .query((rs, n) -> putEntry(hashes, rs))
                                        .list())
                        .size()
                > 0;
        if (!head) {
            StoreException.during(
                    "reading the rules of " + cluster + " at " + seq,
                    () -> sql.sql(
                                    "SELECT DISTINCT ON (family, unit, variant) family, unit, variant, hash FROM version_entry "
                                            + "WHERE cluster = ? AND seq <= ? ORDER BY family, unit, variant, seq DESC")
                            .params(cluster, seq)
                            .query((rs, n) -> putEntry(hashes, rs))
                            .list());
        }
        Map<String, RuleFragment> bodies = fragments(hashes.values());
        Map<FragmentKey, RuleFragment> fragments = new TreeMap<>();
        hashes.forEach((k, h) -> fragments.put(k, bodies.get(h)));
        return ClusterRules.of(fragments, nodes(cluster, seq));
    }

    /**
     * The deltas of the versions after {@code after} up to {@code upTo}, each from its parent, read back from what each
     * version changed: what the compiler published for them (fragments with their text, removals, node changes). A
     * version retention made the oldest has no delta (its stored entries are all of its rules, no longer a change), so
     * the list starts after the oldest stored version, and holds only versions that follow each other from
     * {@code after + 1}: empty when that one is not stored.
     */
    public List<RulesDelta> deltas(String cluster, long after, long upTo) {
        return StoreException.during(
                "reading the deltas of " + cluster + " after " + after,
                () -> snapshotRead.execute(st -> {
                    long oldest = sql.sql("SELECT coalesce(min(seq), 0) FROM version WHERE cluster = ?")
                            .param(cluster)
                            .query(Long.class)
                            .single();
                    long from = Math.max(after, oldest == 1 ? 0 : oldest);
                    if (from != after || upTo <= after) {
                        return List.<RulesDelta>of();
                    }
                    Map<Long, Instant> created = new TreeMap<>();
                    Map<Long, String> lineages = new HashMap<>();
                    sql.sql(
                                    "SELECT seq, created_at, lineage FROM version WHERE cluster = ? AND seq >= ? AND seq <= ? ORDER BY seq")
                            .params(cluster, after, upTo)
                            .query((rs, n) -> {
                                lineages.put(rs.getLong(1), rs.getString(3));
                                return rs.getLong(1) > after
                                        ? created.put(
                                                rs.getLong(1),
                                                rs.getTimestamp(2).toInstant())
                                        : null;
                            })
                            .list();
                    Map<Long, List<Entry>> entries = new HashMap<>();
                    Set<String> hashes = new HashSet<>();
                    sql.sql(
                                    "SELECT seq, family, unit, variant, hash FROM version_entry WHERE cluster = ? AND seq > ? AND seq <= ? "
                                            + "ORDER BY seq, family, unit, variant")
                            .params(cluster, after, upTo)
                            .query((rs, n) -> {
                                FragmentKey key = new FragmentKey(
                                        IpFamily.fromId(rs.getString(2)),
                                        Unit.parse(rs.getString(3)),
                                        Variant.parse(rs.getString(4)));
                                String hash = rs.getString(5);
                                if (hash != null) {
                                    hashes.add(hash);
                                }
                                return entries.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>())
                                        .add(new Entry(key, hash));
                            })
                            .list();
                    Map<Long, List<RulesDiff.NodeChange>> nodes = new HashMap<>();
                    sql.sql(
                                    "SELECT seq, node, zone FROM version_node WHERE cluster = ? AND seq > ? AND seq <= ? ORDER BY seq, node")
                            .params(cluster, after, upTo)
                            .query((rs, n) -> nodes.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>())
                                    .add(new RulesDiff.NodeChange(rs.getString(2), null, rs.getString(3))))
                            .list();
                    Map<String, RuleFragment> bodies = fragments(hashes);
                    List<RulesDelta> out = new ArrayList<>();
                    long expected = after + 1;
                    for (Map.Entry<Long, Instant> v : created.entrySet()) {
                        if (v.getKey() != expected++) {
                            break;
                        }
                        List<RulesDiff.FragmentChange> changes = new ArrayList<>();
                        for (Entry e : entries.getOrDefault(v.getKey(), List.of())) {
                            // As a delta read off the wire holds them: afters only, removals with an empty "before".
                            changes.add(
                                    e.hash() == null
                                            ? new RulesDiff.FragmentChange(e.key(), RuleFragment.EMPTY, null)
                                            : new RulesDiff.FragmentChange(e.key(), null, bodies.get(e.hash())));
                        }
                        out.add(new RulesDelta(
                                cluster,
                                v.getKey() - 1,
                                v.getKey(),
                                v.getValue(),
                                new RulesDiff(changes, nodes.getOrDefault(v.getKey(), List.of())),
                                lineages.getOrDefault(v.getKey() - 1, Lineage.UNKNOWN),
                                lineages.get(v.getKey())));
                    }
                    return out;
                }));
    }

    /** A stored change of one fragment: its new hash, or null when removed. */
    private record Entry(FragmentKey key, String hash) {}

    /** Adds the row's entry (family, unit, variant, hash) unless it is a removal or the head has no entries. */
    private static Boolean putEntry(Map<FragmentKey, String> hashes, ResultSet rs) throws SQLException {
        if (rs.getString(4) != null) {
            hashes.put(
                    new FragmentKey(
                            IpFamily.fromId(rs.getString(1)),
                            Unit.parse(rs.getString(2)),
                            Variant.parse(rs.getString(3))),
                    rs.getString(4));
        }
        return Boolean.TRUE;
    }

    /** The nodes of a cluster at a version, with their zones ("" without one): cheap, no rules read. */
    public SortedMap<String, String> nodes(String cluster, long seq) {
        SortedMap<String, String> nodes = new TreeMap<>();
        StoreException.during(
                "reading the nodes of " + cluster + " at " + seq,
                () -> sql.sql(
                                "SELECT DISTINCT ON (node) node, zone FROM version_node WHERE cluster = ? AND seq <= ? ORDER BY node, seq DESC")
                        .params(cluster, seq)
                        .query((rs, n) -> {
                            if (rs.getString(2) != null) {
                                nodes.put(rs.getString(1), rs.getString(2));
                            }
                            return null;
                        })
                        .list());
        return nodes;
    }

    /** Fragment bodies by hash. */
    public Map<String, RuleFragment> fragments(Collection<String> hashes) {
        Map<String, RuleFragment> out = new HashMap<>();
        if (hashes.isEmpty()) {
            return out;
        }
        StoreException.during(
                "reading fragments",
                () -> sql.sql("SELECT hash, body FROM fragment WHERE hash = ANY (?)")
                        .param(new SqlArrayValue(
                                "bpchar", hashes.stream().distinct().toArray()))
                        .query((rs, n) ->
                                out.put(rs.getString(1), RuleFragment.parse(FragmentBodies.gunzip(rs.getBytes(2)))))
                        .list());
        return out;
    }

    public Optional<VersionInfo> version(String cluster, long seq) {
        return versions("WHERE cluster = ? AND seq = ?", cluster, seq).stream().findFirst();
    }

    /** When each of these versions was created (versions that do not exist are left out). */
    public Map<Long, Instant> createdAt(String cluster, Collection<Long> seqs) {
        Map<Long, Instant> out = new HashMap<>();
        if (seqs.isEmpty()) {
            return out;
        }
        StoreException.during(
                "reading versions of " + cluster,
                () -> sql.sql("SELECT seq, created_at FROM version WHERE cluster = ? AND seq = ANY (?)")
                        .params(cluster, new SqlArrayValue("bigint", seqs.toArray()))
                        .query((rs, n) ->
                                out.put(rs.getLong(1), rs.getTimestamp(2).toInstant()))
                        .list());
        return out;
    }

    /** A cluster's versions, oldest first. */
    public List<VersionInfo> versions(String cluster) {
        return versions("WHERE cluster = ? ORDER BY seq", cluster);
    }

    /** Up to {@code limit} versions below {@code before}, newest first: one page of a cluster's history. */
    public List<VersionInfo> versionsBefore(String cluster, long before, int limit) {
        return versions("WHERE cluster = ? AND seq < ? ORDER BY seq DESC LIMIT ?", cluster, before, limit);
    }

    private List<VersionInfo> versions(String where, Object... args) {
        return StoreException.during(
                "reading versions of " + args[0],
                () -> sql.sql(
                                "SELECT cluster, seq, created_at, cause, settings, fragments_changed, nodes_changed, lineage FROM version "
                                        + where)
                        .params(args)
                        .query(VersionHistory::versionInfo)
                        .list());
    }

    private static VersionInfo versionInfo(ResultSet rs, int row) throws SQLException {
        return new VersionInfo(
                rs.getString(1),
                rs.getLong(2),
                rs.getTimestamp(3).toInstant(),
                rs.getString(4),
                rs.getString(5),
                rs.getInt(6),
                rs.getInt(7),
                rs.getString(8));
    }

    /** Bytes a version added to the database (its rows and the fragment bodies first stored with it). */
    public long storedBytes(String cluster, long seq) {
        return StoreException.during(
                "measuring version " + seq + " of " + cluster,
                () -> sql.sql(
                                "SELECT COALESCE((SELECT sum(pg_column_size(v.*)) FROM version v WHERE cluster = ? AND seq = ?), 0)"
                                        + " + COALESCE((SELECT sum(pg_column_size(e.*)) FROM version_entry e WHERE cluster = ? AND seq = ?), 0)"
                                        + " + COALESCE((SELECT sum(pg_column_size(n.*)) FROM version_node n WHERE cluster = ? AND seq = ?), 0)"
                                        + " + COALESCE((SELECT sum(pg_column_size(f.*)) FROM fragment f WHERE f.hash IN ("
                                        + "     SELECT e.hash FROM version_entry e WHERE e.cluster = ? AND e.seq = ? AND NOT EXISTS ("
                                        + "       SELECT 1 FROM version_entry o WHERE o.hash = e.hash AND o.cluster = e.cluster AND o.seq < e.seq))), 0)")
                        .params(cluster, seq, cluster, seq, cluster, seq, cluster, seq)
                        .query(Long.class)
                        .single());
    }
}
