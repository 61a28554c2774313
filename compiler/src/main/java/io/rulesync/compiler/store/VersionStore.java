package io.rulesync.compiler.store;

import io.rulesync.compiler.eventlog.LogPosition;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import javax.sql.DataSource;

/**
 * PostgreSQL storage for the event log and the versions (schema: {@code db/migration}). A thin JDBC
 * adapter: it decides nothing about rules, it only writes what a batch produced atomically and reads
 * it back.
 *
 * <p>Two fences keep several compiler instances honest: the consumer position must still be the one
 * the batch was read from, and a cluster's head must still be the parent of the new version. If
 * either moved, {@link #commit} writes nothing and throws {@link StaleWriteException}.
 */
public final class VersionStore {
    private final DataSource ds;

    public VersionStore(DataSource ds) {
        this.ds = ds;
    }

    /** Stored consumer positions (next offset to read) of a group, by partition. */
    public Map<Integer, Long> positions(String group, String topic) {
        Map<Integer, Long> out = new TreeMap<>();
        query("SELECT partition, next_offset FROM consumer_position WHERE consumer_group = ? AND topic = ?",
                rs -> out.put(rs.getInt(1), rs.getLong(2)), group, topic);
        return out;
    }

    /** The stored position of a group in one partition, with the identity of its log; empty when none was stored. */
    public Optional<LogPosition> position(String group, String topic, int partition) {
        List<LogPosition> out = new ArrayList<>();
        query("SELECT next_offset, log_epoch, topic_id, log_start, log_high_water FROM consumer_position "
                + "WHERE consumer_group = ? AND topic = ? AND partition = ?", rs -> {
                    long next = rs.getLong(1);
                    long start = rs.getLong(4);
                    start = rs.wasNull() ? 0 : start;
                    long high = rs.getLong(5);
                    // Positions stored before the log's identity was kept know only themselves.
                    high = rs.wasNull() ? next : Math.max(high, next);
                    out.add(new LogPosition(next, rs.getInt(2), rs.getString(3), Math.min(start, next), high));
                }, group, topic, partition);
        return out.stream().findFirst();
    }

    /**
     * Stores {@code next} as the position of a group in one partition, with its log's identity, if the
     * stored one is still {@code expected} (none: nothing stored yet), and queues {@code outbox} in the
     * same transaction (the resync requests that go with a reset).
     *
     * @throws StaleWriteException another instance moved the position meanwhile
     */
    public void movePosition(String group, String topic, int partition, Optional<LogPosition> expected, LogPosition next,
            List<Batch.OutboxRow> outbox) throws StaleWriteException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                int n;
                if (expected.isEmpty()) {
                    n = update(c, "INSERT INTO consumer_position (consumer_group, topic, partition, next_offset, log_epoch, topic_id, "
                            + "log_start, log_high_water) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", group, topic, partition,
                            next.next(), next.epoch(), next.topicId(), next.start(), next.highWater());
                } else {
                    n = update(c, "UPDATE consumer_position SET next_offset = ?, log_epoch = ?, topic_id = ?, log_start = ?, "
                            + "log_high_water = ? WHERE consumer_group = ? AND topic = ? AND partition = ? AND next_offset = ? "
                            + "AND log_epoch = ?", next.next(), next.epoch(), next.topicId(), next.start(), next.highWater(), group,
                            topic, partition, expected.get().next(), expected.get().epoch());
                }
                if (n != 1) {
                    throw new StaleWriteException("position of " + topic + "/" + partition + " moved since "
                            + expected.map(LogPosition::toString).orElse("none"));
                }
                writeOutbox(c, outbox);
                c.commit();
            } catch (StaleWriteException | SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("moving the position of " + topic + "/" + partition + " failed", e);
        }
    }

    public void commit(Batch b) throws StaleWriteException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                fencePosition(c, b);
                for (Batch.VersionRow v : b.versions()) {
                    writeVersion(c, v);
                }
                writeActions(c, b.actions());
                writeEvents(c, b);
                writeDeadLetters(c, b);
                writeProblems(c, b.problems());
                writeOutbox(c, b.outbox());
                c.commit();
            } catch (StaleWriteException | SQLException | RuntimeException e) {
                c.rollback();
                if (e instanceof SQLException sql && "23505".equals(sql.getSQLState())) {
                    throw new StaleWriteException("already written by another instance: " + sql.getMessage());
                }
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("commit of " + b.topic() + "/" + b.partition() + " failed", e);
        }
    }

    private static void fencePosition(Connection c, Batch b) throws SQLException, StaleWriteException {
        int n;
        if (b.expectedPosition() < 0) {
            n = update(c, "INSERT INTO consumer_position (consumer_group, topic, partition, next_offset, log_epoch) "
                    + "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", b.group(), b.topic(), b.partition(), b.newPosition(), b.epoch());
        } else {
            n = update(c, "UPDATE consumer_position SET next_offset = ?, log_high_water = GREATEST(log_high_water, ?) "
                    + "WHERE consumer_group = ? AND topic = ? AND partition = ? AND next_offset = ? AND log_epoch = ?",
                    b.newPosition(), b.newPosition(), b.group(), b.topic(), b.partition(), b.expectedPosition(), b.epoch());
        }
        if (n != 1) {
            throw new StaleWriteException("position of " + b.topic() + "/" + b.partition() + " moved since " + b.expectedPosition());
        }
    }

    private static void writeVersion(Connection c, Batch.VersionRow v) throws SQLException, StaleWriteException {
        int n = v.seq() == 1
                ? update(c, "INSERT INTO cluster_head (cluster, seq) VALUES (?, 1) ON CONFLICT DO NOTHING", v.cluster())
                : update(c, "UPDATE cluster_head SET seq = ? WHERE cluster = ? AND seq = ?", v.seq(), v.cluster(), v.seq() - 1);
        if (n != 1) {
            throw new StaleWriteException("head of " + v.cluster() + " is no longer " + (v.seq() - 1));
        }
        update(c, "INSERT INTO version (cluster, seq, parent_seq, created_at, cause, settings, fragments_changed, nodes_changed) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                v.cluster(), v.seq(), v.seq() == 1 ? null : v.seq() - 1, Timestamp.from(v.createdAt()), v.cause(),
                v.settings(), v.diff().fragments().size(), v.diff().nodes().size());
        Map<String, RuleFragment> bodies = new LinkedHashMap<>();
        for (RulesDiff.FragmentChange ch : v.diff().fragments()) {
            if (ch.after() != null) {
                bodies.putIfAbsent(ch.after().hash(), ch.after());
            }
        }
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO fragment (hash, body, text_length) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")) {
            for (Map.Entry<String, RuleFragment> e : bodies.entrySet()) {
                String text = e.getValue().text();
                ps.setString(1, e.getKey());
                ps.setBytes(2, gzip(text));
                ps.setInt(3, text.length());
                ps.addBatch();
            }
            ps.executeBatch();
        }
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO version_entry (cluster, seq, family, unit, variant, hash) VALUES (?, ?, ?, ?, ?, ?)")) {
            for (RulesDiff.FragmentChange ch : v.diff().fragments()) {
                ps.setString(1, v.cluster());
                ps.setLong(2, v.seq());
                ps.setString(3, ch.key().family().id());
                ps.setString(4, ch.key().unit().id());
                ps.setString(5, ch.key().variant().id());
                ps.setString(6, ch.after() == null ? null : ch.after().hash());
                ps.addBatch();
            }
            ps.executeBatch();
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO version_node (cluster, seq, node, zone) VALUES (?, ?, ?, ?)")) {
            for (RulesDiff.NodeChange nc : v.diff().nodes()) {
                ps.setString(1, v.cluster());
                ps.setLong(2, v.seq());
                ps.setString(3, nc.node());
                ps.setString(4, nc.zoneAfter());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void writeActions(Connection c, List<Batch.ActionRow> actions) throws SQLException, StaleWriteException {
        Timestamp now = Timestamp.from(Instant.now());
        for (Batch.ActionRow a : actions) {
            int n;
            if (a.resultVersion() != null) {
                n = update(c, "UPDATE operator_action SET status = 'done', result_version = ?, completed_at = ? "
                        + "WHERE id = ? AND status = 'pending'", a.resultVersion(), now, a.id());
            } else {
                try (PreparedStatement ps = c.prepareStatement("UPDATE operator_action SET status = 'rejected', outcome = ?, "
                        + "completed_at = ? WHERE id = ? AND status = 'pending'")) {
                    ps.setString(1, a.refusal());
                    ps.setTimestamp(2, now);
                    ps.setLong(3, a.id());
                    n = ps.executeUpdate();
                }
            }
            if (n != 1) {
                throw new StaleWriteException("operator action " + a.id() + " is no longer pending");
            }
        }
    }

    /** When the earliest event that went into a version was observed (for a rollback: when it was requested). */
    public Optional<Instant> firstObserved(String cluster, long seq) {
        List<Instant> out = new ArrayList<>();
        query("SELECT min(observed_at) FROM cluster_event WHERE cluster = ? AND version_seq = ?", rs -> {
            if (rs.getTimestamp(1) != null) {
                out.add(rs.getTimestamp(1).toInstant());
            }
        }, cluster, seq);
        return out.stream().findFirst();
    }

    /** The status of one of a cluster's operator actions ({@code pending}, {@code done}, ...); empty when it has no such action. */
    public Optional<String> actionStatus(long id, String cluster) {
        List<String> out = new ArrayList<>();
        query("SELECT status FROM operator_action WHERE id = ? AND cluster = ?", rs -> out.add(rs.getString(1)), id, cluster);
        return out.stream().findFirst();
    }

    /** The rollback that pins a cluster: its latest done action, when that is a rollback. */
    public Optional<RecordedAction> pinning(String cluster) {
        List<RecordedAction> out = new ArrayList<>();
        query("SELECT " + RecordedAction.COLUMNS + " FROM operator_action WHERE cluster = ? AND status = 'done' "
                + "ORDER BY result_version DESC LIMIT 1", rs -> out.add(RecordedAction.read(rs)), cluster);
        return out.stream().filter(a -> "rollback".equals(a.action())).findFirst();
    }

    private static void writeEvents(Connection c, Batch b) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO cluster_event (cluster, topic, partition, kafka_offset, "
                + "event_type, kind, object_key, resource_version, observed_at, received_at, payload, version_seq, log_epoch) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            Timestamp now = Timestamp.from(Instant.now());
            for (Batch.EventRow e : b.events()) {
                ps.setString(1, e.cluster());
                ps.setString(2, b.topic());
                ps.setInt(3, b.partition());
                ps.setLong(4, e.offset());
                ps.setString(5, e.type());
                ps.setString(6, e.kind());
                ps.setString(7, e.key());
                ps.setString(8, e.resourceVersion());
                ps.setTimestamp(9, Timestamp.from(e.observedAt()));
                ps.setTimestamp(10, now);
                ps.setString(11, e.payload());
                if (e.versionSeq() == null) {
                    ps.setNull(12, Types.BIGINT);
                } else {
                    ps.setLong(12, e.versionSeq());
                }
                ps.setInt(13, b.epoch());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void writeDeadLetters(Connection c, Batch b) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO dead_letter (topic, partition, kafka_offset, record_key, "
                + "payload, reason, received_at, log_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            Timestamp now = Timestamp.from(Instant.now());
            for (Batch.DeadLetterRow d : b.deadLetters()) {
                ps.setString(1, b.topic());
                ps.setInt(2, b.partition());
                ps.setLong(3, d.offset());
                ps.setString(4, d.key());
                ps.setString(5, d.payload());
                ps.setString(6, d.reason());
                ps.setTimestamp(7, now);
                ps.setInt(8, b.epoch());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Replaces the rows of each changed source: state, so the table holds exactly the current problems. */
    private static void writeProblems(Connection c, List<Batch.ProblemRow> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        try (PreparedStatement del = c.prepareStatement("DELETE FROM cluster_problem WHERE cluster = ? AND source = ?");
                PreparedStatement ins = c.prepareStatement("INSERT INTO cluster_problem (cluster, source, seq, location, object, "
                        + "field, message, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (Batch.ProblemRow r : rows) {
                del.setString(1, r.cluster());
                del.setString(2, r.source());
                del.addBatch();
                for (int i = 0; i < r.problems().size(); i++) {
                    Problem p = r.problems().get(i);
                    ins.setString(1, r.cluster());
                    ins.setString(2, r.source());
                    ins.setInt(3, i);
                    ins.setString(4, p.source());
                    ins.setString(5, p.object());
                    ins.setString(6, p.field());
                    ins.setString(7, p.message());
                    ins.setTimestamp(8, Timestamp.from(r.reportedAt()));
                    ins.addBatch();
                }
            }
            del.executeBatch();
            ins.executeBatch();
        }
    }

    private static void writeOutbox(Connection c, List<Batch.OutboxRow> rows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO outbox (topic, record_key, payload, created_at) VALUES (?, ?, ?, ?)")) {
            Timestamp now = Timestamp.from(Instant.now());
            for (Batch.OutboxRow o : rows) {
                ps.setString(1, o.topic());
                ps.setString(2, o.key());
                ps.setString(3, o.payload());
                ps.setTimestamp(4, now);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Clusters that have events stored from this partition. */
    public List<String> clustersOn(String topic, int partition) {
        List<String> out = new ArrayList<>();
        query("SELECT DISTINCT cluster FROM cluster_event WHERE topic = ? AND partition = ? ORDER BY cluster",
                rs -> out.add(rs.getString(1)), topic, partition);
        return out;
    }

    /** A cluster's stored events (their JSON), in the order they were received. */
    public List<String> eventPayloads(String cluster) {
        List<String> out = new ArrayList<>();
        query("SELECT payload FROM cluster_event WHERE cluster = ? ORDER BY id", rs -> out.add(rs.getString(1)), cluster);
        return out;
    }

    /** A change event as received and stored: the audit trail of what the watcher saw. */
    public record StoredEvent(long id, String type, String kind, String key, String resourceVersion, Instant observedAt,
            Instant receivedAt, Long version) {
    }

    /**
     * A page of a cluster's stored events, oldest first, after event {@code afterId}. Filters may be
     * null: events observed at or after {@code since}; of one {@code kind}; of objects in
     * {@code namespace} and/or named {@code name}.
     */
    public List<StoredEvent> events(String cluster, long afterId, Instant since, String kind, String namespace, String name, int limit) {
        StringBuilder where = new StringBuilder("WHERE cluster = ? AND id > ?");
        List<Object> args = new ArrayList<>(List.of(cluster, afterId));
        if (since != null) {
            where.append(" AND observed_at >= ?");
            args.add(java.sql.Timestamp.from(since));
        }
        if (kind != null) {
            where.append(" AND kind = ?");
            args.add(kind);
        }
        if (namespace != null && name != null) {
            where.append(" AND object_key = ?");
            args.add(namespace + "/" + name);
        } else if (namespace != null) {
            where.append(" AND object_key LIKE ? ESCAPE '\\'");
            args.add(like(namespace) + "/%");
        } else if (name != null) {
            where.append(" AND (object_key = ? OR object_key LIKE ? ESCAPE '\\')");
            args.add(name);
            args.add("%/" + like(name));
        }
        where.append(" ORDER BY id LIMIT ?");
        args.add(limit);
        List<StoredEvent> out = new ArrayList<>();
        query("SELECT id, event_type, kind, object_key, resource_version, observed_at, received_at, version_seq FROM cluster_event "
                + where, rs -> {
                    long v = rs.getLong(8);
                    Long version = rs.wasNull() ? null : v; // asked at once: wasNull() is about the last column read
                    out.add(new StoredEvent(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                            rs.getTimestamp(6).toInstant(), rs.getTimestamp(7).toInstant(), version));
                }, args.toArray());
        return out;
    }

    private static String like(String s) {
        return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }

    /** The latest version of a cluster; 0 when it has none. */
    public long head(String cluster) {
        long[] seq = {0};
        query("SELECT seq FROM cluster_head WHERE cluster = ?", rs -> seq[0] = rs.getLong(1), cluster);
        return seq[0];
    }

    /** Every cluster and its newest version, by cluster id. */
    public java.util.SortedMap<String, Long> heads() {
        java.util.SortedMap<String, Long> out = new java.util.TreeMap<>();
        query("SELECT cluster, seq FROM cluster_head", rs -> out.put(rs.getString(1), rs.getLong(2)));
        return out;
    }

    /** The rules of every node of a cluster at a version, read back from the stored changes. */
    public ClusterRules rules(String cluster, long seq) {
        Map<FragmentKey, String> hashes = new TreeMap<>();
        query("SELECT DISTINCT ON (family, unit, variant) family, unit, variant, hash FROM version_entry "
                + "WHERE cluster = ? AND seq <= ? ORDER BY family, unit, variant, seq DESC", rs -> {
                    if (rs.getString(4) != null) {
                        hashes.put(new FragmentKey(IpFamily.fromId(rs.getString(1)), Unit.parse(rs.getString(2)),
                                Variant.parse(rs.getString(3))), rs.getString(4));
                    }
                }, cluster, seq);
        Map<String, RuleFragment> bodies = fragments(hashes.values());
        Map<FragmentKey, RuleFragment> fragments = new TreeMap<>();
        hashes.forEach((k, h) -> fragments.put(k, bodies.get(h)));
        return ClusterRules.of(fragments, nodes(cluster, seq));
    }

    /** The nodes of a cluster at a version, with their zones ("" without one): cheap, no rules read. */
    public java.util.SortedMap<String, String> nodes(String cluster, long seq) {
        java.util.SortedMap<String, String> nodes = new TreeMap<>();
        query("SELECT DISTINCT ON (node) node, zone FROM version_node WHERE cluster = ? AND seq <= ? ORDER BY node, seq DESC",
                rs -> {
                    if (rs.getString(2) != null) {
                        nodes.put(rs.getString(1), rs.getString(2));
                    }
                }, cluster, seq);
        return nodes;
    }

    /** Fragment bodies by hash. */
    public Map<String, RuleFragment> fragments(Collection<String> hashes) {
        Map<String, RuleFragment> out = new HashMap<>();
        if (hashes.isEmpty()) {
            return out;
        }
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT hash, body FROM fragment WHERE hash = ANY (?)")) {
            Array array = c.createArrayOf("bpchar", hashes.stream().distinct().toArray());
            ps.setArray(1, array);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), RuleFragment.parse(gunzip(rs.getBytes(2))));
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading fragments failed", e);
        }
        return out;
    }

    /** One version's metadata. */
    public record VersionInfo(String cluster, long seq, Instant createdAt, String cause, String settings,
            int fragmentsChanged, int nodesChanged) {
    }

    public Optional<VersionInfo> version(String cluster, long seq) {
        List<VersionInfo> out = versions("WHERE cluster = ? AND seq = ?", cluster, seq);
        return out.stream().findFirst();
    }

    /** When each of these versions was created (versions that do not exist are left out). */
    public Map<Long, Instant> createdAt(String cluster, Collection<Long> seqs) {
        Map<Long, Instant> out = new HashMap<>();
        if (seqs.isEmpty()) {
            return out;
        }
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT seq, created_at FROM version WHERE cluster = ? AND seq = ANY (?)")) {
            ps.setString(1, cluster);
            ps.setArray(2, c.createArrayOf("bigint", seqs.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getLong(1), rs.getTimestamp(2).toInstant());
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading versions of " + cluster + " failed", e);
        }
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
        List<VersionInfo> out = new ArrayList<>();
        query("SELECT cluster, seq, created_at, cause, settings, fragments_changed, nodes_changed FROM version " + where,
                rs -> out.add(new VersionInfo(rs.getString(1), rs.getLong(2), rs.getTimestamp(3).toInstant(),
                        rs.getString(4), rs.getString(5), rs.getInt(6), rs.getInt(7))), args);
        return out;
    }

    /** Bytes a version added to the database (its rows and the fragment bodies first stored with it). */
    public long storedBytes(String cluster, long seq) {
        long[] total = {0};
        query("SELECT COALESCE((SELECT sum(pg_column_size(v.*)) FROM version v WHERE cluster = ? AND seq = ?), 0)"
                        + " + COALESCE((SELECT sum(pg_column_size(e.*)) FROM version_entry e WHERE cluster = ? AND seq = ?), 0)"
                        + " + COALESCE((SELECT sum(pg_column_size(n.*)) FROM version_node n WHERE cluster = ? AND seq = ?), 0)"
                        + " + COALESCE((SELECT sum(pg_column_size(f.*)) FROM fragment f WHERE f.hash IN ("
                        + "     SELECT e.hash FROM version_entry e WHERE e.cluster = ? AND e.seq = ? AND NOT EXISTS ("
                        + "       SELECT 1 FROM version_entry o WHERE o.hash = e.hash AND o.cluster = e.cluster AND o.seq < e.seq))), 0)",
                rs -> total[0] = rs.getLong(1), cluster, seq, cluster, seq, cluster, seq, cluster, seq);
        return total[0];
    }

    /** An outbox message waiting to be published. */
    public record OutboxMessage(long id, String topic, String key, String payload) {
    }

    /** What publishing a batch of outbox messages needs: true once all were acknowledged. */
    public interface Publisher {
        boolean publish(List<OutboxMessage> messages);
    }

    /**
     * Publishes the oldest outbox messages and deletes them, in one transaction that locks the rows
     * it took (SKIP LOCKED), so that several relays never publish the same row at the same time.
     * Returns how many were published; 0 when there was nothing to do or publishing failed (the rows
     * stay for the next attempt: delivery is at least once, and receivers dedupe by version).
     */
    public int relayOutbox(int limit, Publisher publisher) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                List<OutboxMessage> batch = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement("SELECT id, topic, record_key, payload FROM outbox "
                        + "ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED")) {
                    ps.setInt(1, limit);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            batch.add(new OutboxMessage(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)));
                        }
                    }
                }
                if (batch.isEmpty() || !publisher.publish(batch)) {
                    c.rollback();
                    return 0;
                }
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM outbox WHERE id = ANY (?)")) {
                    ps.setArray(1, c.createArrayOf("bigint", batch.stream().map(OutboxMessage::id).toArray()));
                    ps.executeUpdate();
                }
                c.commit();
                return batch.size();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new StoreException("relaying the outbox failed", e);
        }
    }

    public List<OutboxMessage> pendingOutbox(int limit) {
        List<OutboxMessage> out = new ArrayList<>();
        query("SELECT id, topic, record_key, payload FROM outbox ORDER BY id LIMIT ?",
                rs -> out.add(new OutboxMessage(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4))), limit);
        return out;
    }

    private interface RowHandler {
        void row(ResultSet rs) throws SQLException;
    }

    private void query(String sql, RowHandler handler, Object... args) {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    handler.row(rs);
                }
            }
        } catch (SQLException e) {
            throw new StoreException("query failed: " + sql, e);
        }
    }

    private static int update(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            return ps.executeUpdate();
        }
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            if (args[i] == null) {
                ps.setNull(i + 1, Types.BIGINT);
            } else {
                ps.setObject(i + 1, args[i]);
            }
        }
    }

    static byte[] gzip(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length() / 4 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    static String gunzip(byte[] body) {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
