package io.rulesync.store;

import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.topic.LogPosition;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.ParameterizedPreparedStatementSetter;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The compiler's writes: its consumer positions, and everything one batch produced (events, dead
 * letters, versions, completed operator actions, problems, outbox messages), in one transaction.
 * It decides nothing about rules.
 *
 * <p>Fences keep several compiler instances honest: the consumer position must still be the one the
 * batch was read from, and a cluster's head must still be the parent of the new version. If either
 * moved, {@link #commit} writes nothing and throws {@link StaleWriteException}. A store
 * {@link #fencedBy fenced by} a writer's claim also checks, first, that the claim still holds, and
 * throws {@link WriterFencedException} when another compiler took the partition.
 */
public final class BatchStore implements PartitionStore.Writes {
    private final JdbcTemplate jdbc;
    private final JdbcClient sql;
    private final TransactionTemplate tx;
    /** Null: writes without a claim (tools and fixtures that write history while no compiler runs). */
    private final PartitionWriters.Claim claim;

    public BatchStore(DataSource ds) {
        this(new JdbcTemplate(ds), new TransactionTemplate(new DataSourceTransactionManager(ds)), null);
    }

    private BatchStore(JdbcTemplate jdbc, TransactionTemplate tx, PartitionWriters.Claim claim) {
        this.jdbc = jdbc;
        this.sql = JdbcClient.create(jdbc);
        this.tx = tx;
        this.claim = claim;
    }

    /** This store, its commits and position moves checked against {@code claim} in their own transaction. */
    public BatchStore fencedBy(PartitionWriters.Claim claim) {
        return new BatchStore(jdbc, tx, claim);
    }

    /** Stored consumer positions (next offset to read) of a group, by partition. */
    public Map<Integer, Long> positions(String group, String topic) {
        Map<Integer, Long> out = new TreeMap<>();
        StoreException.during(
                "reading the positions of " + group + " in " + topic,
                () -> sql.sql(
                                "SELECT partition, next_offset FROM consumer_position WHERE consumer_group = ? AND topic = ?")
                        .params(group, topic)
                        .query((rs, n) -> out.put(rs.getInt(1), rs.getLong(2)))
                        .list());
        return out;
    }

    /** The stored position of a group in one partition, with the identity of its log; empty when none was stored. */
    public Optional<LogPosition> position(String group, String topic, int partition) {
        return StoreException.during(
                "reading the position of " + topic + "/" + partition,
                () -> sql.sql(
                                "SELECT next_offset, log_epoch, topic_id, log_start, log_high_water FROM consumer_position "
                                        + "WHERE consumer_group = ? AND topic = ? AND partition = ?")
                        .params(group, topic, partition)
                        .query((rs, n) -> {
                            long next = rs.getLong(1);
                            long start = rs.getLong(4);
                            start = rs.wasNull() ? 0 : start;
                            long high = rs.getLong(5);
                            // Positions stored before the log's identity was kept know only themselves.
                            high = rs.wasNull() ? next : Math.max(high, next);
                            return new LogPosition(next, rs.getInt(2), rs.getString(3), Math.min(start, next), high);
                        })
                        .optional());
    }

    /**
     * Stores {@code next} as the position of a group in one partition, with its log's identity, if the
     * stored one is still {@code expected} (none: nothing stored yet), and queues {@code outbox} in the
     * same transaction (the resync requests that go with a reset).
     *
     * @throws StaleWriteException another instance moved the position meanwhile
     */
    public void movePosition(
            String group,
            String topic,
            int partition,
            Optional<LogPosition> expected,
            LogPosition next,
            List<Batch.OutboxRow> outbox)
            throws StaleWriteException {
        inTransaction("moving the position of " + topic + "/" + partition, false, () -> {
            fenceWriter(topic, partition);
            int n;
            SqlParameterValue topicId = new SqlParameterValue(Types.VARCHAR, next.topicId());
            if (expected.isEmpty()) {
                n = sql.sql(
                                "INSERT INTO consumer_position (consumer_group, topic, partition, next_offset, log_epoch, topic_id, "
                                        + "log_start, log_high_water) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
                        .params(
                                group,
                                topic,
                                partition,
                                next.next(),
                                next.epoch(),
                                topicId,
                                next.start(),
                                next.highWater())
                        .update();
            } else {
                n = sql.sql("UPDATE consumer_position SET next_offset = ?, log_epoch = ?, topic_id = ?, log_start = ?, "
                                + "log_high_water = ? WHERE consumer_group = ? AND topic = ? AND partition = ? AND next_offset = ? "
                                + "AND log_epoch = ?")
                        .params(
                                next.next(),
                                next.epoch(),
                                topicId,
                                next.start(),
                                next.highWater(),
                                group,
                                topic,
                                partition,
                                expected.get().next(),
                                expected.get().epoch())
                        .update();
            }
            if (n != 1) {
                throw new StaleWriteException("position of " + topic + "/" + partition + " moved since "
                        + expected.map(LogPosition::toString).orElse("none"));
            }
            writeOutbox(outbox);
        });
    }

    /**
     * Writes the batch in one transaction. Returns, for each cluster of {@link Batch#checkpointsDue()}, its newest
     * event id in that transaction: what a checkpoint of its state after the batch stands for.
     */
    public Map<String, Long> commit(Batch b) throws StaleWriteException {
        Map<String, Long> lastEventIds = new TreeMap<>();
        inTransaction("commit of " + b.topic() + "/" + b.partition(), true, () -> {
            fenceWriter(b.topic(), b.partition());
            fencePosition(b);
            if (!b.versions().isEmpty()) {
                // Shared with other writers, exclusive for retention's removal of unreferenced fragment bodies: a body
                // this batch finds stored (and so does not insert) stays stored until the batch commits.
                sql.sql("SELECT 1 FROM pg_advisory_xact_lock_shared(?, ?)")
                        .params(HistoryPruning.RULESYNC, HistoryPruning.FRAGMENTS)
                        .query(Integer.class)
                        .single();
            }
            for (Batch.VersionRow v : b.versions()) {
                writeVersion(v);
            }
            // Sent at commit, once per cluster: the api wakes the agents waiting for its next version
            // (Notifications.HEADS).
            for (String cluster : b.versions().stream()
                    .map(Batch.VersionRow::cluster)
                    .distinct()
                    .toList()) {
                sql.sql("SELECT pg_notify(?, ?)")
                        .params(Notifications.HEADS, cluster)
                        .query((rs, n) -> 1)
                        .list();
            }
            writeActions(b.actions());
            writeEvents(b);
            writeDeadLetters(b);
            writeProblems(b.problems());
            NodeLabelStore.write(jdbc, b.nodeLabels());
            writeOutbox(b.outbox());
            // After the batch's events: one compiler writes a partition's clusters at a time (the position fence).
            for (String cluster : b.checkpointsDue()) {
                sql.sql("SELECT max(id) FROM cluster_event WHERE cluster = ?")
                        .param(cluster)
                        .query(Long.class)
                        .optional()
                        .ifPresent(id -> lastEventIds.put(cluster, id));
            }
        });
        return lastEventIds;
    }

    /**
     * Replaces a cluster's checkpoint with {@code c}, unless the stored one stands for a later event already
     * (checkpoints are written after their batch, off the batch's thread, and may arrive late).
     */
    public void writeCheckpoint(Batch.CheckpointRow c) {
        StoreException.during(
                "writing the checkpoint of " + c.cluster(),
                () -> sql.sql(
                                "INSERT INTO cluster_checkpoint (cluster, last_event_id, version_seq, objects, body, text_length, created_at) "
                                        + "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cluster) DO UPDATE SET last_event_id = EXCLUDED.last_event_id, "
                                        + "version_seq = EXCLUDED.version_seq, objects = EXCLUDED.objects, body = EXCLUDED.body, "
                                        + "text_length = EXCLUDED.text_length, created_at = EXCLUDED.created_at "
                                        + "WHERE cluster_checkpoint.last_event_id < EXCLUDED.last_event_id")
                        .params(
                                c.cluster(),
                                c.lastEventId(),
                                c.versionSeq(),
                                c.objects(),
                                FragmentBodies.gzip(c.text()),
                                c.text().length(),
                                Timestamp.from(c.createdAt()))
                        .update());
    }

    /** Queues messages to publish (through the outbox relay), on their own: the resync requests a rebuild asks for. */
    public void enqueue(List<Batch.OutboxRow> rows) {
        StoreException.during("queueing " + rows.size() + " message(s)", () -> {
            writeOutbox(rows);
            return null;
        });
    }

    /** The status of one of a cluster's operator actions ({@code pending}, {@code done}, ...); empty when it has no such action. */
    public Optional<String> actionStatus(long id, String cluster) {
        return StoreException.during(
                "reading operator action " + id,
                () -> sql.sql("SELECT status FROM operator_action WHERE id = ? AND cluster = ?")
                        .params(id, cluster)
                        .query(String.class)
                        .optional());
    }

    private interface Work {
        void run() throws StaleWriteException;
    }

    /** Carries a fence's refusal out of the transaction callback, which rolls back on it. */
    private static final class Refused extends RuntimeException {
        private final StaleWriteException stale;

        Refused(StaleWriteException stale) {
            super(stale.getMessage(), null, false, false);
            this.stale = stale;
        }
    }

    /**
     * Runs {@code work} in one transaction, rolled back when it throws. With {@code raceIsStale}, a
     * unique key refusing a row means another instance already wrote it: stale, not a failure.
     */
    private void inTransaction(String what, boolean raceIsStale, Work work) throws StaleWriteException {
        try {
            tx.executeWithoutResult(status -> {
                try {
                    work.run();
                } catch (StaleWriteException e) {
                    throw new Refused(e);
                }
            });
        } catch (Refused r) {
            throw r.stale;
        } catch (DataAccessException e) {
            if (raceIsStale && StoreException.uniqueViolation(e)) {
                throw new StaleWriteException("already written by another instance: "
                        + e.getMostSpecificCause().getMessage());
            }
            throw new StoreException(what + " failed", e);
        } catch (TransactionException e) {
            throw new StoreException(what + " failed", e);
        }
    }

    /**
     * First in the transaction: the claim's row stays locked until commit, so a claim made meanwhile waits for this batch
     * and the new writer rebuilds from it. Also the writer's sign of life ({@code heard_at}).
     */
    private void fenceWriter(String topic, int partition) throws WriterFencedException {
        if (claim == null) {
            return;
        }
        if (!claim.topic().equals(topic) || claim.partition() != partition) {
            throw new IllegalArgumentException("a store fenced by a claim on " + claim.topic() + "/" + claim.partition()
                    + " cannot write " + topic + "/" + partition);
        }
        int n = sql.sql(
                        "UPDATE partition_writer SET heard_at = now() WHERE topic = ? AND partition = ? AND writer = ? AND epoch = ?")
                .params(topic, partition, claim.writer(), claim.epoch())
                .update();
        if (n != 1) {
            PartitionWriters.Holder now =
                    PartitionWriters.read(sql, topic, partition, "").orElse(null);
            throw new WriterFencedException(
                    topic + "/" + partition + " is no longer written by " + claim.writer() + " (epoch " + claim.epoch()
                            + "): " + (now == null ? "nobody holds it" : now + " holds it"),
                    now);
        }
    }

    private void fencePosition(Batch b) throws StaleWriteException {
        int n;
        if (b.expectedPosition() < 0) {
            n = sql.sql("INSERT INTO consumer_position (consumer_group, topic, partition, next_offset, log_epoch) "
                            + "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
                    .params(b.group(), b.topic(), b.partition(), b.newPosition(), b.epoch())
                    .update();
        } else {
            n = sql.sql(
                            "UPDATE consumer_position SET next_offset = ?, log_high_water = GREATEST(log_high_water, ?) "
                                    + "WHERE consumer_group = ? AND topic = ? AND partition = ? AND next_offset = ? AND log_epoch = ?")
                    .params(
                            b.newPosition(),
                            b.newPosition(),
                            b.group(),
                            b.topic(),
                            b.partition(),
                            b.expectedPosition(),
                            b.epoch())
                    .update();
        }
        if (n != 1) {
            throw new StaleWriteException(
                    "position of " + b.topic() + "/" + b.partition() + " moved since " + b.expectedPosition());
        }
    }

    private void writeVersion(Batch.VersionRow v) throws StaleWriteException {
        int n = v.seq() == 1
                ? sql.sql("INSERT INTO cluster_head (cluster, seq) VALUES (?, 1) ON CONFLICT DO NOTHING")
                        .param(v.cluster())
                        .update()
                : sql.sql("UPDATE cluster_head SET seq = ? WHERE cluster = ? AND seq = ?")
                        .params(v.seq(), v.cluster(), v.seq() - 1)
                        .update();
        if (n != 1) {
            throw new StaleWriteException("head of " + v.cluster() + " is no longer " + (v.seq() - 1));
        }
        sql.sql(
                        "INSERT INTO version (cluster, seq, parent_seq, created_at, cause, settings, fragments_changed, nodes_changed, lineage) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
                .params(
                        v.cluster(),
                        v.seq(),
                        new SqlParameterValue(Types.BIGINT, v.seq() == 1 ? null : v.seq() - 1),
                        Timestamp.from(v.createdAt()),
                        v.cause(),
                        v.settings(),
                        v.diff().fragments().size(),
                        v.diff().nodes().size(),
                        v.lineage())
                .update();
        Map<String, RuleFragment> bodies = new LinkedHashMap<>();
        for (RulesDiff.FragmentChange ch : v.diff().fragments()) {
            if (ch.after() != null) {
                bodies.putIfAbsent(ch.after().hash(), ch.after());
            }
        }
        batch(
                "INSERT INTO fragment (hash, body, text_length) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                new ArrayList<>(bodies.entrySet()),
                (ps, e) -> {
                    String text = e.getValue().text();
                    ps.setString(1, e.getKey());
                    ps.setBytes(2, FragmentBodies.gzip(text));
                    ps.setInt(3, text.length());
                });
        batch(
                "INSERT INTO version_entry (cluster, seq, family, unit, variant, hash) VALUES (?, ?, ?, ?, ?, ?)",
                v.diff().fragments(),
                (ps, ch) -> {
                    ps.setString(1, v.cluster());
                    ps.setLong(2, v.seq());
                    ps.setString(3, ch.key().family().id());
                    ps.setString(4, ch.key().unit().id());
                    ps.setString(5, ch.key().variant().id());
                    ps.setString(6, ch.after() == null ? null : ch.after().hash());
                });
        // The head's entries follow (cluster_head_entry): what reading the head reads, whatever the history's length.
        List<RulesDiff.FragmentChange> set =
                v.diff().fragments().stream().filter(ch -> ch.after() != null).toList();
        List<RulesDiff.FragmentChange> removed =
                v.diff().fragments().stream().filter(ch -> ch.after() == null).toList();
        batch(
                "INSERT INTO cluster_head_entry (cluster, family, unit, variant, hash, seq) VALUES (?, ?, ?, ?, ?, ?) "
                        + "ON CONFLICT (cluster, family, unit, variant) DO UPDATE SET hash = EXCLUDED.hash, seq = EXCLUDED.seq",
                set,
                (ps, ch) -> {
                    ps.setString(1, v.cluster());
                    ps.setString(2, ch.key().family().id());
                    ps.setString(3, ch.key().unit().id());
                    ps.setString(4, ch.key().variant().id());
                    ps.setString(5, ch.after().hash());
                    ps.setLong(6, v.seq());
                });
        batch(
                "DELETE FROM cluster_head_entry WHERE cluster = ? AND family = ? AND unit = ? AND variant = ?",
                removed,
                (ps, ch) -> {
                    ps.setString(1, v.cluster());
                    ps.setString(2, ch.key().family().id());
                    ps.setString(3, ch.key().unit().id());
                    ps.setString(4, ch.key().variant().id());
                });
        batch(
                "INSERT INTO version_node (cluster, seq, node, zone) VALUES (?, ?, ?, ?)",
                v.diff().nodes(),
                (ps, nc) -> {
                    ps.setString(1, v.cluster());
                    ps.setLong(2, v.seq());
                    ps.setString(3, nc.node());
                    ps.setString(4, nc.zoneAfter());
                });
    }

    private void writeActions(List<Batch.ActionRow> actions) throws StaleWriteException {
        Timestamp now = Timestamp.from(Instant.now());
        for (Batch.ActionRow a : actions) {
            int n = a.resultVersion() != null
                    ? sql.sql("UPDATE operator_action SET status = 'done', result_version = ?, completed_at = ? "
                                    + "WHERE id = ? AND status = 'pending'")
                            .params(a.resultVersion(), now, a.id())
                            .update()
                    : sql.sql("UPDATE operator_action SET status = 'rejected', outcome = ?, completed_at = ? "
                                    + "WHERE id = ? AND status = 'pending'")
                            .params(a.refusal(), now, a.id())
                            .update();
            if (n != 1) {
                throw new StaleWriteException("operator action " + a.id() + " is no longer pending");
            }
        }
    }

    private void writeEvents(Batch b) {
        Timestamp now = Timestamp.from(Instant.now());
        batch(
                "INSERT INTO cluster_event (cluster, topic, partition, kafka_offset, event_type, kind, object_key, resource_version, "
                        + "observed_at, received_at, payload, version_seq, log_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                b.events(),
                (ps, e) -> {
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
                });
    }

    private void writeDeadLetters(Batch b) {
        Timestamp now = Timestamp.from(Instant.now());
        batch(
                "INSERT INTO dead_letter (topic, partition, kafka_offset, record_key, payload, reason, received_at, log_epoch) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                b.deadLetters(),
                (ps, d) -> {
                    ps.setString(1, b.topic());
                    ps.setInt(2, b.partition());
                    ps.setLong(3, d.offset());
                    ps.setString(4, storable(d.key()));
                    ps.setString(5, storable(d.payload()));
                    ps.setString(6, storable(d.reason()));
                    ps.setTimestamp(7, now);
                    ps.setInt(8, b.epoch());
                });
    }

    /**
     * A dead letter is kept whatever it holds: PostgreSQL's text cannot hold a NUL, so each is written as its JSON escape,
     * a backslash, 'u' and four zeros (a record that cannot be stored must not stop its partition).
     */
    private static String storable(String s) {
        return s == null || s.indexOf(0) < 0 ? s : s.replace("\0", "\\u0000");
    }

    /** One current problem of a changed source, at its place in the source's report. */
    private record ProblemAt(Batch.ProblemRow row, int seq, Problem problem) {}

    /** Replaces the rows of each changed source: state, so the table holds exactly the current problems. */
    private void writeProblems(List<Batch.ProblemRow> rows) {
        if (rows.isEmpty()) {
            return;
        }
        List<ProblemAt> problems = new ArrayList<>();
        for (Batch.ProblemRow r : rows) {
            for (int i = 0; i < r.problems().size(); i++) {
                problems.add(new ProblemAt(r, i, r.problems().get(i)));
            }
        }
        batch("DELETE FROM cluster_problem WHERE cluster = ? AND source = ?", rows, (ps, r) -> {
            ps.setString(1, r.cluster());
            ps.setString(2, r.source());
        });
        batch(
                "INSERT INTO cluster_problem (cluster, source, seq, location, object, field, message, reported_at) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                problems,
                (ps, p) -> {
                    ps.setString(1, p.row().cluster());
                    ps.setString(2, p.row().source());
                    ps.setInt(3, p.seq());
                    ps.setString(4, p.problem().source());
                    ps.setString(5, p.problem().object());
                    ps.setString(6, p.problem().field());
                    ps.setString(7, p.problem().message());
                    ps.setTimestamp(8, Timestamp.from(p.row().reportedAt()));
                });
    }

    private void writeOutbox(List<Batch.OutboxRow> rows) {
        Timestamp now = Timestamp.from(Instant.now());
        batch("INSERT INTO outbox (topic, record_key, payload, created_at) VALUES (?, ?, ?, ?)", rows, (ps, o) -> {
            ps.setString(1, o.topic());
            ps.setString(2, o.key());
            ps.setString(3, o.payload());
            ps.setTimestamp(4, now);
        });
    }

    /** One JDBC batch of {@code rows} (JdbcClient has none); nothing is sent for none. */
    private <T> void batch(String statement, List<T> rows, ParameterizedPreparedStatementSetter<T> set) {
        if (!rows.isEmpty()) {
            jdbc.batchUpdate(statement, rows, rows.size(), set);
        }
    }
}
