package io.rulesync.store;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The stored change events ({@code cluster_event}, written by {@link BatchStore#commit}): what the
 * compiler replays to rebuild a partition's clusters, with the checkpoint that shortens that replay
 * ({@code cluster_checkpoint}), and the audit trail the api searches.
 */
public final class EventLog implements PartitionStore.Events {
    private final JdbcClient sql;

    public EventLog(DataSource ds) {
        this.sql = JdbcClient.create(ds);
    }

    /** A change event as received and stored: the audit trail of what the watcher saw. */
    public record StoredEvent(
            long id,
            String type,
            String kind,
            String key,
            String resourceVersion,
            Instant observedAt,
            Instant receivedAt,
            Long version) {}

    /**
     * Clusters that have events stored from this partition. A skip scan of the (topic, partition, cluster)
     * index, one probe per cluster: a plain DISTINCT would read every event of the partition.
     */
    public List<String> clustersOn(String topic, int partition) {
        return StoreException.during(
                "reading the clusters of " + topic + "/" + partition,
                () -> sql.sql("WITH RECURSIVE c (cluster) AS ("
                                + " (SELECT cluster FROM cluster_event WHERE topic = :topic AND partition = :partition ORDER BY cluster LIMIT 1)"
                                + " UNION ALL"
                                + " SELECT (SELECT e.cluster FROM cluster_event e WHERE e.topic = :topic AND e.partition = :partition"
                                + " AND e.cluster > c.cluster ORDER BY e.cluster LIMIT 1) FROM c WHERE c.cluster IS NOT NULL)"
                                + " SELECT cluster FROM c WHERE cluster IS NOT NULL ORDER BY cluster")
                        .param("topic", topic)
                        .param("partition", partition)
                        .query(String.class)
                        .list());
    }

    /** A cluster's stored events (their JSON), in the order they were received. */
    public List<String> eventPayloads(String cluster) {
        return eventPayloadsAfter(cluster, 0);
    }

    /**
     * A cluster's stored events (their JSON) after event {@code afterId}, in the order they were received. Parts of
     * large events are left out: the whole event is stored too, at its last part.
     */
    public List<String> eventPayloadsAfter(String cluster, long afterId) {
        return StoreException.during(
                "reading the events of " + cluster,
                () -> sql.sql(
                                "SELECT payload FROM cluster_event WHERE cluster = ? AND id > ? AND event_type <> 'part' ORDER BY id")
                        .params(cluster, afterId)
                        .query(String.class)
                        .list());
    }

    /** A stored event's id and its JSON. */
    public record Payload(long id, String json) {}

    /** {@link #eventPayloadsAfter} with each event's id, for a reader that keeps up by asking for what came after it. */
    public List<Payload> payloadsAfter(String cluster, long afterId) {
        return StoreException.during(
                "reading the events of " + cluster,
                () -> sql.sql(
                                "SELECT id, payload FROM cluster_event WHERE cluster = ? AND id > ? AND event_type <> 'part' ORDER BY id")
                        .params(cluster, afterId)
                        .query((rs, n) -> new Payload(rs.getLong(1), rs.getString(2)))
                        .list());
    }

    /** The id of the cluster's newest stored event; 0 when it has none. */
    public long lastEventId(String cluster) {
        return StoreException.during(
                "reading the newest event of " + cluster,
                () -> sql.sql("SELECT coalesce(max(id), 0) FROM cluster_event WHERE cluster = ?")
                        .params(cluster)
                        .query(Long.class)
                        .single());
    }

    /**
     * The parts of a large event of the cluster whose last part has not come yet: the parts stored after its
     * newest whole event (a cluster's parts are contiguous, from its one writer).
     */
    public List<String> pendingParts(String cluster) {
        return StoreException.during(
                "reading the pending parts of " + cluster,
                () -> sql.sql(
                                "SELECT payload FROM cluster_event WHERE cluster = :c AND event_type = 'part' AND id > coalesce("
                                        + "(SELECT max(id) FROM cluster_event WHERE cluster = :c AND event_type <> 'part'), 0) ORDER BY id")
                        .param("c", cluster)
                        .query(String.class)
                        .list());
    }

    /**
     * The id below which retention removed a cluster's events ({@link HistoryPruning}); 0 when none were, and its log
     * still starts at its first event.
     */
    public long removedBefore(String cluster) {
        return StoreException.during(
                "reading the retention of " + cluster,
                () -> sql.sql("SELECT events_before FROM cluster_retention WHERE cluster = ?")
                        .param(cluster)
                        .query(Long.class)
                        .optional()
                        .orElse(0L));
    }

    /** A cluster's checkpoint as stored: it stands for the cluster's events up to {@code lastEventId}. */
    public record StoredCheckpoint(
            String cluster, long lastEventId, long versionSeq, int objects, String text, Instant createdAt) {}

    /** The last event a cluster's newest checkpoint stands for, without reading the checkpoint; empty when none was written. */
    public OptionalLong checkpointEvent(String cluster) {
        return StoreException.during(
                "reading the checkpoint of " + cluster,
                () -> sql.sql("SELECT last_event_id FROM cluster_checkpoint WHERE cluster = ?")
                        .param(cluster)
                        .query(Long.class)
                        .optional()
                        .map(OptionalLong::of)
                        .orElse(OptionalLong.empty()));
    }

    /** A cluster's newest checkpoint; empty when none was written. */
    public Optional<StoredCheckpoint> checkpoint(String cluster) {
        return StoreException.during(
                "reading the checkpoint of " + cluster,
                () -> sql.sql(
                                "SELECT last_event_id, version_seq, objects, body, created_at FROM cluster_checkpoint WHERE cluster = ?")
                        .param(cluster)
                        .query((rs, n) -> new StoredCheckpoint(
                                cluster,
                                rs.getLong(1),
                                rs.getLong(2),
                                rs.getInt(3),
                                FragmentBodies.gunzip(rs.getBytes(4)),
                                rs.getTimestamp(5).toInstant()))
                        .optional());
    }

    /** When the earliest event that went into a version was observed (for a rollback: when it was requested). */
    public Optional<Instant> firstObserved(String cluster, long seq) {
        return StoreException.during(
                "reading the events of " + cluster,
                () -> sql.sql("SELECT min(observed_at) FROM cluster_event WHERE cluster = ? AND version_seq = ?")
                        .params(cluster, seq)
                        .query((rs, n) ->
                                Optional.ofNullable(rs.getTimestamp(1)).map(Timestamp::toInstant))
                        .single());
    }

    /**
     * A page of a cluster's stored events, oldest first, after event {@code afterId}. Filters may be
     * null: events observed at or after {@code since}; of one {@code kind}; of objects in
     * {@code namespace} and/or named {@code name}.
     */
    public List<StoredEvent> events(
            String cluster, long afterId, Instant since, String kind, String namespace, String name, int limit) {
        StringBuilder where = new StringBuilder("WHERE cluster = ? AND id > ?");
        List<Object> args = new ArrayList<>(List.of(cluster, afterId));
        if (since != null) {
            where.append(" AND observed_at >= ?");
            args.add(Timestamp.from(since));
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
        return StoreException.during(
                "searching the events of " + cluster,
                () -> sql.sql(
                                "SELECT id, event_type, kind, object_key, resource_version, observed_at, received_at, version_seq "
                                        + "FROM cluster_event " + where)
                        .params(args)
                        .query((rs, n) -> {
                            long v = rs.getLong(8);
                            Long version =
                                    rs.wasNull() ? null : v; // asked at once: wasNull() is about the last column read
                            return new StoredEvent(
                                    rs.getLong(1),
                                    rs.getString(2),
                                    rs.getString(3),
                                    rs.getString(4),
                                    rs.getString(5),
                                    rs.getTimestamp(6).toInstant(),
                                    rs.getTimestamp(7).toInstant(),
                                    version);
                        })
                        .list());
    }

    private static String like(String s) {
        return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }
}
