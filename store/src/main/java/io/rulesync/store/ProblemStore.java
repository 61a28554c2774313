package io.rulesync.store;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads what the compiler knows of a cluster's refused objects: the current problems of each source
 * (table {@code cluster_problem}, written by {@link BatchStore#commit} with the batch that changed
 * them) and the records it refused as dead letters. The api's problems endpoint is made of these.
 */
public final class ProblemStore {
    private final JdbcClient sql;

    public ProblemStore(DataSource ds) {
        this.sql = JdbcClient.create(ds);
    }

    /** One current problem of one source. */
    public record StoredProblem(
            String source, String location, String object, String field, String message, Instant reportedAt) {}

    /** A record of the events topic the compiler could not use, and why. */
    public record DeadLetter(
            long id,
            String topic,
            int partition,
            int epoch,
            long offset,
            String reason,
            Instant receivedAt,
            String payloadStart) {}

    /** The current problems of a cluster, by source and then by their place in the source's report. */
    public List<StoredProblem> problems(String cluster) {
        return StoreException.during(
                "reading the problems of " + cluster,
                () -> sql.sql(
                                "SELECT source, location, object, field, message, reported_at FROM cluster_problem WHERE cluster = ? "
                                        + "ORDER BY source COLLATE \"C\", seq")
                        .param(cluster)
                        .query((rs, n) -> new StoredProblem(
                                rs.getString(1),
                                rs.getString(2),
                                rs.getString(3),
                                rs.getString(4),
                                rs.getString(5),
                                rs.getTimestamp(6).toInstant()))
                        .list());
    }

    /**
     * Objects refused now per cluster (clusters without any are left out): distinct objects named per
     * source, a problem that names none (an unreadable file) counting as one.
     */
    public SortedMap<String, Integer> refusedObjects() {
        SortedMap<String, Integer> out = new TreeMap<>();
        StoreException.during(
                "counting refused objects",
                () -> sql.sql("SELECT cluster, count(DISTINCT (source, object)) FROM cluster_problem GROUP BY cluster")
                        .query((rs, n) -> out.put(rs.getString(1), rs.getInt(2)))
                        .list());
        return out;
    }

    /**
     * The newest {@code limit} dead letters of the records keyed by {@code cluster}, newest first, each
     * with the first {@code payloadChars} characters of what it held.
     */
    public List<DeadLetter> deadLetters(String cluster, int limit, int payloadChars) {
        return StoreException.during(
                "reading the dead letters of " + cluster,
                () -> sql.sql(
                                "SELECT id, topic, partition, log_epoch, kafka_offset, reason, received_at, left(payload, ?) FROM dead_letter "
                                        + "WHERE record_key = ? ORDER BY id DESC LIMIT ?")
                        .params(payloadChars, cluster, limit)
                        .query((rs, n) -> new DeadLetter(
                                rs.getLong(1),
                                rs.getString(2),
                                rs.getInt(3),
                                rs.getInt(4),
                                rs.getLong(5),
                                rs.getString(6),
                                rs.getTimestamp(7).toInstant(),
                                rs.getString(8)))
                        .list());
    }

    /**
     * Queues dead letter {@code id} of {@code cluster} to be read again: its record, as stored, goes into the outbox for
     * the events topic it came from, and the compiler's outbox relay publishes it there (after a compiler fix, the record
     * is then folded as any other; failing again, it is a new dead letter). Returns that topic; empty when the cluster
     * has no such dead letter.
     */
    public Optional<String> replay(String cluster, long id, Instant at) {
        return StoreException.during(
                "replaying dead letter " + id + " of " + cluster,
                () -> sql.sql(
                                "INSERT INTO outbox (topic, record_key, payload, created_at) SELECT topic, record_key, payload, ? FROM dead_letter "
                                        + "WHERE id = ? AND record_key = ? RETURNING topic")
                        .params(java.sql.Timestamp.from(at), id, cluster)
                        .query(String.class)
                        .optional());
    }

    /** How many dead letters the records keyed by {@code cluster} made. */
    public long deadLetterCount(String cluster) {
        return StoreException.during(
                "counting the dead letters of " + cluster,
                () -> sql.sql("SELECT count(*) FROM dead_letter WHERE record_key = ?")
                        .param(cluster)
                        .query(Long.class)
                        .single());
    }

    /** Whether anything of {@code cluster} was ever received: a version, an event, a problem or a dead letter. */
    public boolean known(String cluster) {
        return StoreException.during(
                "looking up " + cluster,
                () -> sql.sql(
                                "SELECT EXISTS (SELECT 1 FROM cluster_head WHERE cluster = ?) OR EXISTS (SELECT 1 FROM cluster_event WHERE cluster = ?) "
                                        + "OR EXISTS (SELECT 1 FROM cluster_problem WHERE cluster = ?) OR EXISTS (SELECT 1 FROM dead_letter WHERE record_key = ?)")
                        .params(cluster, cluster, cluster, cluster)
                        .query(Boolean.class)
                        .single());
    }
}
