package io.rulesync.store;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Who writes each partition of the events topic ({@code partition_writer}): one compiler at a time, whatever its
 * consumer group. A compiler claims a partition when Kafka assigns it; {@link BatchStore#fencedBy} then checks the
 * claim in every commit's transaction, so a writer whose claim was taken commits nothing more. Times are the
 * database's clock, never a compiler's.
 */
public final class PartitionWriters {
    /** A compiler's claim on one partition: what its commits are fenced by. */
    public record Claim(String topic, int partition, String writer, long epoch) {}

    /** Who holds a partition, and how long ago it was last heard from (its last commit or renewal). */
    public record Holder(String group, String writer, long epoch, Duration silentFor) {
        @Override
        public String toString() {
            return "compiler " + writer + " of consumer group '" + group + "' (epoch " + epoch + ", heard from "
                    + silentFor.toMillis() + " ms ago)";
        }
    }

    /** What a claim got. */
    public sealed interface Outcome {
        /** The partition is this compiler's; {@code previous} held it before (null: nobody), from another group if it differs. */
        record Granted(Claim claim, Holder previous) implements Outcome {}

        /** Another compiler holds it and was heard from within the lease. */
        record Refused(Holder holder) implements Outcome {}
    }

    private final JdbcClient sql;
    private final TransactionTemplate tx;

    public PartitionWriters(DataSource ds) {
        this.sql = JdbcClient.create(new JdbcTemplate(ds));
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    /**
     * Claims a partition for {@code writer} of {@code group}. With {@code assigned} (Kafka just gave it to this compiler),
     * a holder of the same group is replaced at once: the group's assignment is the authority, and the holder is a member
     * that lost the partition (or froze and woke up). A holder of another group, and any holder when not {@code assigned}
     * (a compiler standing by), is replaced only when it has been silent for {@code lease}. Taking a partition from another
     * group takes that group's stored position with it, so the new writer goes on exactly where the old one stopped.
     */
    public Outcome claim(String topic, int partition, String group, String writer, Duration lease, boolean assigned) {
        return StoreException.during(
                "claiming " + topic + "/" + partition,
                () -> tx.execute(status -> {
                    Optional<Holder> held = locked(topic, partition);
                    if (held.isEmpty()) {
                        int n = sql.sql(
                                        "INSERT INTO partition_writer (topic, partition, consumer_group, writer, epoch, heard_at) "
                                                + "VALUES (?, ?, ?, ?, 1, now()) ON CONFLICT DO NOTHING")
                                .params(topic, partition, group, writer)
                                .update();
                        if (n == 1) {
                            return new Outcome.Granted(new Claim(topic, partition, writer, 1), null);
                        }
                        held = locked(topic, partition); // inserted by another claim meanwhile: decide against it
                    }
                    Holder h = held.orElseThrow();
                    boolean takeOver = h.writer().equals(writer)
                            || (assigned && h.group().equals(group))
                            || h.silentFor().compareTo(lease) >= 0;
                    if (!takeOver) {
                        return new Outcome.Refused(h);
                    }
                    long epoch = sql.sql(
                                    "UPDATE partition_writer SET consumer_group = ?, writer = ?, epoch = epoch + 1, heard_at = now() "
                                            + "WHERE topic = ? AND partition = ? RETURNING epoch")
                            .params(group, writer, topic, partition)
                            .query(Long.class)
                            .single();
                    if (!h.group().equals(group)) {
                        sql.sql(
                                        "INSERT INTO consumer_position (consumer_group, topic, partition, next_offset, log_epoch, topic_id, log_start, "
                                                + "log_high_water) SELECT ?, topic, partition, next_offset, log_epoch, topic_id, log_start, log_high_water "
                                                + "FROM consumer_position WHERE consumer_group = ? AND topic = ? AND partition = ? "
                                                + "ON CONFLICT (consumer_group, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, "
                                                + "log_epoch = EXCLUDED.log_epoch, topic_id = EXCLUDED.topic_id, log_start = EXCLUDED.log_start, "
                                                + "log_high_water = EXCLUDED.log_high_water")
                                .params(group, h.group(), topic, partition)
                                .update();
                    }
                    return new Outcome.Granted(new Claim(topic, partition, writer, epoch), h);
                }));
    }

    /**
     * Tells the database that {@code writer} still holds the partitions of {@code claims} (while idle, commits do it). Returns
     * those it no longer holds, with who does now: each was taken while this writer was silent.
     */
    public Map<Integer, Holder> renew(String topic, String writer, Map<Integer, Long> claims) {
        if (claims.isEmpty()) {
            return Map.of();
        }
        Map<Integer, Long> still = new HashMap<>();
        StoreException.during(
                "renewing the claims of " + writer,
                () -> sql.sql(
                                "UPDATE partition_writer SET heard_at = now() WHERE topic = ? AND writer = ? AND partition = ANY (?) "
                                        + "RETURNING partition, epoch")
                        .params(topic, writer, claims.keySet().toArray(Integer[]::new))
                        .query((rs, n) -> still.put(rs.getInt(1), rs.getLong(2)))
                        .list());
        Map<Integer, Holder> lost = new HashMap<>();
        claims.forEach((partition, epoch) -> {
            if (!epoch.equals(still.get(partition))) {
                lost.put(partition, holder(topic, partition).orElse(new Holder("?", "nobody", 0, Duration.ZERO)));
            }
        });
        return lost;
    }

    /** Marks every claim of {@code writer} as long silent: a compiler standing by takes them at its next try. */
    public void release(String topic, String writer) {
        StoreException.during(
                "releasing the claims of " + writer,
                () -> sql.sql("UPDATE partition_writer SET heard_at = 'epoch' WHERE topic = ? AND writer = ?")
                        .params(topic, writer)
                        .update());
    }

    /** Who holds a partition now. */
    public Optional<Holder> holder(String topic, int partition) {
        return StoreException.during(
                "reading the writer of " + topic + "/" + partition, () -> read(sql, topic, partition, ""));
    }

    private Optional<Holder> locked(String topic, int partition) {
        return read(sql, topic, partition, " FOR UPDATE");
    }

    static Optional<Holder> read(JdbcClient sql, String topic, int partition, String lock) {
        List<Holder> rows = sql.sql(
                        "SELECT consumer_group, writer, epoch, extract(epoch FROM now() - heard_at) FROM partition_writer "
                                + "WHERE topic = ? AND partition = ?" + lock)
                .params(topic, partition)
                .query((rs, n) ->
                        new Holder(rs.getString(1), rs.getString(2), rs.getLong(3), Duration.ofNanos(Math.max(0, (long)
                                (rs.getDouble(4) * 1e9)))))
                .list();
        return rows.stream().findFirst();
    }
}
