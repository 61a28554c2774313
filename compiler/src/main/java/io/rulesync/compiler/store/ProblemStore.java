package io.rulesync.compiler.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Reads what the compiler knows of a cluster's refused objects: the current problems of each source
 * (table {@code cluster_problem}, written by {@link VersionStore#commit} with the batch that changed
 * them) and the records it refused as dead letters. The api's problems endpoint is made of these.
 */
public final class ProblemStore {
    private final DataSource ds;

    public ProblemStore(DataSource ds) {
        this.ds = ds;
    }

    /** One current problem of one source. */
    public record StoredProblem(String source, String location, String object, String field, String message, Instant reportedAt) {
    }

    /** A record of the events topic the compiler could not use, and why. */
    public record DeadLetter(long id, String topic, int partition, int epoch, long offset, String reason, Instant receivedAt,
            String payloadStart) {
    }

    /** The current problems of a cluster, by source and then by their place in the source's report. */
    public List<StoredProblem> problems(String cluster) {
        List<StoredProblem> out = new ArrayList<>();
        query("SELECT source, location, object, field, message, reported_at FROM cluster_problem WHERE cluster = ? "
                + "ORDER BY source, seq", rs -> out.add(new StoredProblem(rs.getString(1), rs.getString(2), rs.getString(3),
                        rs.getString(4), rs.getString(5), rs.getTimestamp(6).toInstant())), cluster);
        return out;
    }

    /**
     * Objects refused now per cluster (clusters without any are left out): distinct objects named per
     * source, a problem that names none (an unreadable file) counting as one.
     */
    public SortedMap<String, Integer> refusedObjects() {
        SortedMap<String, Integer> out = new TreeMap<>();
        query("SELECT cluster, count(DISTINCT (source, object)) FROM cluster_problem GROUP BY cluster",
                rs -> out.put(rs.getString(1), rs.getInt(2)));
        return out;
    }

    /**
     * The newest {@code limit} dead letters of the records keyed by {@code cluster}, newest first, each
     * with the first {@code payloadChars} characters of what it held.
     */
    public List<DeadLetter> deadLetters(String cluster, int limit, int payloadChars) {
        List<DeadLetter> out = new ArrayList<>();
        query("SELECT id, topic, partition, log_epoch, kafka_offset, reason, received_at, left(payload, ?) FROM dead_letter "
                + "WHERE record_key = ? ORDER BY id DESC LIMIT ?", rs -> out.add(new DeadLetter(rs.getLong(1), rs.getString(2),
                        rs.getInt(3), rs.getInt(4), rs.getLong(5), rs.getString(6), rs.getTimestamp(7).toInstant(), rs.getString(8))),
                payloadChars, cluster, limit);
        return out;
    }

    /** How many dead letters the records keyed by {@code cluster} made. */
    public long deadLetterCount(String cluster) {
        long[] n = {0};
        query("SELECT count(*) FROM dead_letter WHERE record_key = ?", rs -> n[0] = rs.getLong(1), cluster);
        return n[0];
    }

    /** Whether anything of {@code cluster} was ever received: a version, an event, a problem or a dead letter. */
    public boolean known(String cluster) {
        boolean[] known = {false};
        query("SELECT EXISTS (SELECT 1 FROM cluster_head WHERE cluster = ?) OR EXISTS (SELECT 1 FROM cluster_event WHERE cluster = ?) "
                + "OR EXISTS (SELECT 1 FROM cluster_problem WHERE cluster = ?) OR EXISTS (SELECT 1 FROM dead_letter WHERE record_key = ?)",
                rs -> known[0] = rs.getBoolean(1), cluster, cluster, cluster, cluster);
        return known[0];
    }

    private interface RowHandler {
        void row(ResultSet rs) throws SQLException;
    }

    private void query(String sql, RowHandler handler, Object... args) {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    handler.row(rs);
                }
            }
        } catch (SQLException e) {
            throw new StoreException("query failed: " + sql, e);
        }
    }
}
