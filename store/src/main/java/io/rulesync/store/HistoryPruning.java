package io.rulesync.store;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Retention's writes: removes a cluster's versions below a floor, the events a usable checkpoint stands for, dead
 * letters older than the oldest kept version, and the fragment bodies nothing refers to any more. Which floor is
 * the compiler's decision; this class only reads what may hold it back ({@link #holds}) and carries it out.
 *
 * <p>Every kept version reads back exactly as before: the entries and nodes in force at the new oldest version
 * are written at its seq before anything older is removed. Operator actions (the audit log) are never removed.
 */
public final class HistoryPruning {
    /** Advisory lock keys: (RULESYNC, FRAGMENTS) guards fragment bodies, (RULESYNC_RETENTION, hash of cluster) one pruner per cluster. */
    static final int RULESYNC = 0x72756c65;

    static final int FRAGMENTS = 1;
    private static final int RULESYNC_RETENTION = 0x72657465;

    private final JdbcClient sql;
    private final TransactionTemplate tx;
    /** The reads the other stores already make (inside {@link #prune}'s transaction too: one data source). */
    private final VersionHistory history;

    private final EventLog eventLog;
    private final OperatorActionStore actions;

    public HistoryPruning(DataSource ds) {
        this.sql = JdbcClient.create(ds);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        this.history = new VersionHistory(ds);
        this.eventLog = new EventLog(ds);
        this.actions = new OperatorActionStore(ds);
    }

    /** A node of the cluster (at its head) and the version it runs. */
    public record NodeRunning(String node, long version) {}

    /**
     * What bounds a cluster's history: its head, the first version created at or after
     * {@code youngerThan} (empty: none is, or no age limit was asked for), and what must be kept whatever the
     * policy: the oldest version a node of the cluster runs, the version a pinning rollback republished, and the
     * target of a pending rollback.
     */
    public record Holds(
            long head,
            OptionalLong firstYoung,
            Optional<NodeRunning> oldestRunning,
            OptionalLong pinnedTo,
            OptionalLong pendingRollbackTo) {}

    /** What a pass removed; {@code oldest} is the cluster's oldest version after it. */
    public record Pruned(long oldest, long versions, long events, long fragments, long deadLetters) {
        public boolean any() {
            return versions + events + fragments + deadLetters > 0;
        }
    }

    public Holds holds(String cluster, Instant youngerThan) {
        return StoreException.during("reading what holds the history of " + cluster, () -> {
            long head = history.head(cluster);
            OptionalLong young = OptionalLong.empty();
            if (youngerThan != null) {
                // By creation time (the index): a clock that stepped back can make this a little later than the exact
                // first.
                young = sql.sql(
                                "SELECT seq FROM version WHERE cluster = ? AND created_at >= ? ORDER BY created_at, seq LIMIT 1")
                        .params(cluster, Timestamp.from(youngerThan))
                        .query(Long.class)
                        .optional()
                        .map(OptionalLong::of)
                        .orElse(OptionalLong.empty());
            }
            // Only nodes the cluster has at its head: a node that left holds nothing back.
            Optional<NodeRunning> running = sql.sql(
                            "SELECT s.node, s.running FROM node_status s WHERE s.cluster = :c AND s.running > 0 "
                                    + "AND (SELECT n.zone FROM version_node n WHERE n.cluster = :c AND n.node = s.node ORDER BY n.seq DESC LIMIT 1) "
                                    + "IS NOT NULL ORDER BY s.running, s.node LIMIT 1")
                    .param("c", cluster)
                    .query((rs, n) -> new NodeRunning(rs.getString(1), rs.getLong(2)))
                    .optional();
            return new Holds(
                    head,
                    young,
                    running,
                    rollbackTarget(history.pinning(cluster)),
                    rollbackTarget(actions.pendingOf(cluster)));
        });
    }

    /** The version a rollback names; empty for none, or for a resume. */
    private static OptionalLong rollbackTarget(Optional<RecordedAction> action) {
        return action.map(RecordedAction::toVersion).map(OptionalLong::of).orElse(OptionalLong.empty());
    }

    /**
     * Removes, in one transaction, a cluster's versions below {@code floor} (at most {@code maxVersions} of them: a
     * long backlog is worked off over several passes), its events before {@code checkpointEvent} (the last event a
     * checkpoint the caller read back stands for; 0: none is usable, no event is removed) that belong to no kept
     * version and are no part of an unfinished large event, at most {@code maxEvents} of them, its dead letters
     * older than the oldest kept version, and the fragment bodies no version refers to any more. Another pruner of
     * the same cluster at work: nothing is done.
     */
    public Pruned prune(String cluster, long floor, long checkpointEvent, int maxVersions, int maxEvents, Instant now) {
        return StoreException.during(
                "pruning the history of " + cluster,
                () -> tx.execute(status -> {
                    boolean mine = sql.sql("SELECT pg_try_advisory_xact_lock(?, hashtext(?))")
                            .params(RULESYNC_RETENTION, cluster)
                            .query(Boolean.class)
                            .single();
                    long oldest = history.oldest(cluster);
                    if (!mine || oldest == 0) {
                        return new Pruned(oldest, 0, 0, 0, 0);
                    }
                    long to = Math.min(floor, oldest + maxVersions);
                    long versions = 0;
                    List<String> released = List.of();
                    if (to > oldest) {
                        // The new oldest version gets the entries and nodes in force there, then what is older goes.
                        sql.sql("INSERT INTO version_entry (cluster, seq, family, unit, variant, hash) "
                                        + "SELECT :c, :to, family, unit, variant, hash FROM ("
                                        + " SELECT DISTINCT ON (family, unit, variant) family, unit, variant, hash FROM version_entry"
                                        + " WHERE cluster = :c AND seq < :to ORDER BY family, unit, variant, seq DESC) latest "
                                        + "WHERE hash IS NOT NULL ON CONFLICT DO NOTHING")
                                .param("c", cluster)
                                .param("to", to)
                                .update();
                        sql.sql(
                                        "INSERT INTO version_node (cluster, seq, node, zone) SELECT :c, :to, node, zone FROM ("
                                                + " SELECT DISTINCT ON (node) node, zone FROM version_node WHERE cluster = :c AND seq < :to"
                                                + " ORDER BY node, seq DESC) latest WHERE zone IS NOT NULL ON CONFLICT DO NOTHING")
                                .param("c", cluster)
                                .param("to", to)
                                .update();
                        released = sql.sql(
                                        "WITH gone AS (DELETE FROM version_entry WHERE cluster = ? AND seq < ? RETURNING hash) "
                                                + "SELECT DISTINCT hash FROM gone WHERE hash IS NOT NULL")
                                .params(cluster, to)
                                .query(String.class)
                                .list();
                        sql.sql("DELETE FROM version_node WHERE cluster = ? AND seq < ?")
                                .params(cluster, to)
                                .update();
                        versions = sql.sql("DELETE FROM version WHERE cluster = ? AND seq < ?")
                                .params(cluster, to)
                                .update();
                    }
                    long kept = Math.max(to, oldest);
                    long events = 0;
                    long eventsBefore = eventLog.removedBefore(cluster);
                    if (checkpointEvent > 0) {
                        // Kept: the checkpoint's own event (so the cluster is still found on its partition), every
                        // event of a kept
                        // version, and the parts of a large event whose last part has not come (a rebuild restores
                        // them).
                        long cut = sql.sql(
                                        "SELECT least(:e, (SELECT min(id) FROM cluster_event WHERE cluster = :c AND version_seq >= :k), "
                                                + "(SELECT min(id) FROM cluster_event WHERE cluster = :c AND event_type = 'part' AND id > coalesce("
                                                + "(SELECT max(id) FROM cluster_event WHERE cluster = :c AND event_type <> 'part'), 0)))")
                                .param("e", checkpointEvent)
                                .param("c", cluster)
                                .param("k", kept)
                                .query(Long.class)
                                .single();
                        List<Long> gone = sql.sql(
                                        "DELETE FROM cluster_event WHERE id IN (SELECT id FROM cluster_event WHERE cluster = ? "
                                                + "AND id < ? ORDER BY id LIMIT ?) RETURNING id")
                                .params(cluster, cut, maxEvents)
                                .query(Long.class)
                                .list();
                        events = gone.size();
                        if (!gone.isEmpty()) {
                            eventsBefore = Math.max(
                                    eventsBefore,
                                    gone.stream()
                                                    .mapToLong(Long::longValue)
                                                    .max()
                                                    .orElseThrow()
                                            + 1);
                        }
                    }
                    long deadLetters = sql.sql("DELETE FROM dead_letter WHERE record_key = ? AND received_at < "
                                    + "(SELECT created_at FROM version WHERE cluster = ? AND seq = ?)")
                            .params(cluster, cluster, kept)
                            .update();
                    long fragments = 0;
                    if (!released.isEmpty()) {
                        // Writers hold this lock shared while they store versions: a body they found stored stays
                        // stored.
                        sql.sql("SELECT 1 FROM pg_advisory_xact_lock(?, ?)")
                                .params(RULESYNC, FRAGMENTS)
                                .query(Integer.class)
                                .single();
                        fragments = sql.sql("DELETE FROM fragment f WHERE f.hash = ANY (?) "
                                        + "AND NOT EXISTS (SELECT 1 FROM version_entry e WHERE e.hash = f.hash) "
                                        + "AND NOT EXISTS (SELECT 1 FROM cluster_head_entry h WHERE h.hash = f.hash)")
                                .param(new SqlArrayValue("bpchar", released.toArray()))
                                .update();
                    }
                    if (versions + events + deadLetters > 0) {
                        sql.sql(
                                        "INSERT INTO cluster_retention (cluster, oldest_version, events_before, versions_removed, events_removed, pruned_at) "
                                                + "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (cluster) DO UPDATE SET oldest_version = EXCLUDED.oldest_version, "
                                                + "events_before = EXCLUDED.events_before, versions_removed = cluster_retention.versions_removed + "
                                                + "EXCLUDED.versions_removed, events_removed = cluster_retention.events_removed + EXCLUDED.events_removed, "
                                                + "pruned_at = EXCLUDED.pruned_at")
                                .params(cluster, kept, eventsBefore, versions, events, Timestamp.from(now))
                                .update();
                    }
                    return new Pruned(kept, versions, events, fragments, deadLetters);
                }));
    }

    /** Removes dead letters received before {@code before}, whatever their key (records of no cluster too); returns how many. */
    public long pruneDeadLetters(Instant before) {
        return StoreException.during(
                "pruning dead letters", () -> (long) sql.sql("DELETE FROM dead_letter WHERE received_at < ?")
                        .param(Timestamp.from(before))
                        .update());
    }
}
