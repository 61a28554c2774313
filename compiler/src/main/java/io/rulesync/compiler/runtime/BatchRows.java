package io.rulesync.compiler.runtime;

import io.rulesync.compiler.fold.ProblemReports;
import io.rulesync.compiler.runtime.PartitionProcessor.Record;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.OperatorAction;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import io.rulesync.model.event.Json;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The rows a partition's batches write, shaped from what the batch holds: stored events and parts, dead letters, new
 * versions with their deltas, resync requests, and why each version exists. Pure: the partition's topics and number
 * are all it knows; {@link PartitionProcessor} decides what goes into a batch.
 */
final class BatchRows {
    /** At most this many objects are named in a version's cause; the rest are counted. */
    static final int CAUSE_OBJECTS = 20;
    /** Below Kafka's default 1 MiB message limit, with room for headers. */
    static final int MAX_MESSAGE_CHARS = 900_000;

    /** A record of the events topic and the event it holds, to be stored. */
    record Decoded(Record record, ClusterEvent event) {}

    private final Topics topics;
    private final int partition;

    BatchRows(Topics topics, int partition) {
        this.topics = Objects.requireNonNull(topics, "topics");
        this.partition = partition;
    }

    /**
     * An event as stored, with the version it led to ({@code seq}, null when none). The stored type is the event's name
     * on the wire: every type has one, so none is stored as another.
     */
    Batch.EventRow event(Decoded d, Long seq) {
        ClusterEvent e = d.event();
        String kind = null;
        String key = null;
        String rv = null;
        if (e instanceof ObjectUpserted u) {
            kind = u.ref().kind().apiName();
            key = u.ref().key();
            rv = u.resourceVersion();
        } else if (e instanceof ObjectDeleted del) {
            kind = del.ref().kind().apiName();
            key = del.ref().key();
            rv = del.resourceVersion();
        } else if (e instanceof SyncMarker m) {
            kind = m.kind().apiName();
        }
        return new Batch.EventRow(
                e.cluster(),
                d.record().offset(),
                e.type().wireName(),
                kind,
                key,
                rv,
                e.observedAt(),
                d.record().value(),
                seq);
    }

    /** One part of an event too large for one message, stored as it came (a rebuild restores the pending ones). */
    Batch.EventRow part(EventParts.Part p, Record r) {
        return new Batch.EventRow(p.cluster(), r.offset(), "part", null, null, null, p.observedAt(), r.value(), null);
    }

    /** A record refused, with the reason: kept in {@code dead_letter} and published to the dead-letter topic. */
    void deadLetter(Record r, String reason, List<Batch.DeadLetterRow> dead, List<Batch.OutboxRow> outbox) {
        dead.add(new Batch.DeadLetterRow(r.offset(), r.key(), r.value(), reason));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("reason", reason);
        m.put("topic", topics.events());
        m.put("partition", partition);
        m.put("offset", r.offset());
        m.put("key", r.key());
        m.put("value", r.value());
        outbox.add(new Batch.OutboxRow(topics.deadLetters(), r.key() == null ? "" : r.key(), Json.write(m)));
    }

    /** A request to the cluster's watcher for a resync, for the outbox. */
    Batch.OutboxRow resync(String cluster, String reason, Instant now) {
        return new Batch.OutboxRow(topics.resyncs(), cluster, new ResyncRequest(cluster, reason, now).encode());
    }

    /** A new version of {@code step}'s cluster, with its delta (in parts where large) for the outbox. */
    void version(
            String cluster,
            String baseLineage,
            ClusterHead.Step step,
            String cause,
            Instant now,
            List<Batch.VersionRow> versions,
            List<Batch.OutboxRow> outbox) {
        long seq = step.next().version();
        String lineage = step.next().lineage();
        String settings = Json.write(EventCodec.settingsMap(step.next().view().settings()));
        versions.add(new Batch.VersionRow(cluster, seq, now, cause, settings, step.diff(), lineage));
        for (String part : new RulesDelta(cluster, seq - 1, seq, now, step.diff(), baseLineage, lineage)
                .toJsonParts(MAX_MESSAGE_CHARS)) {
            outbox.add(new Batch.OutboxRow(topics.deltas(), cluster, part));
        }
    }

    /**
     * Why a version exists: the operator actions carried out in the batch (who, what, why), the events that made it, by
     * offset, and the objects they named.
     */
    String cause(List<Decoded> all, List<ClusterHead.ActionOutcome> outcomes) {
        // Digests and problem reports change no rules: they are not why a version exists.
        List<Decoded> events = all.stream()
                .filter(d -> !ProblemReports.leavesRulesAlone(d.event()))
                .toList();
        TreeSet<String> objects = new TreeSet<>();
        for (Decoded d : events) {
            if (d.event() instanceof OperatorAction) {
                continue;
            }
            if (d.event() instanceof ObjectUpserted u) {
                objects.add(u.ref().toString());
            } else if (d.event() instanceof ObjectDeleted del) {
                objects.add(del.ref().toString() + " (deleted)");
            } else if (d.event() instanceof SyncMarker m) {
                objects.add("sync of " + m.kind().apiName());
            } else {
                objects.add("settings");
            }
        }
        Map<String, Object> c = new LinkedHashMap<>();
        List<Map<String, Object>> done = new ArrayList<>();
        for (ClusterHead.ActionOutcome o : outcomes) {
            if (o.accepted()) {
                Map<String, Object> a = new LinkedHashMap<>();
                a.put("id", o.action().actionId());
                a.put("action", o.action() instanceof RollbackRequested ? "rollback" : "resume");
                if (o.action() instanceof RollbackRequested r) {
                    a.put("toVersion", r.toVersion());
                }
                a.put("actor", o.action().actor());
                a.put("reason", o.action().reason());
                done.add(a);
            }
        }
        if (!done.isEmpty()) {
            c.put("operatorActions", done);
        }
        c.put("events", events.size());
        c.put("topic", topics.events());
        c.put("partition", partition);
        c.put("firstOffset", events.get(0).record().offset());
        c.put("lastOffset", events.get(events.size() - 1).record().offset());
        List<String> named = new ArrayList<>(objects).subList(0, Math.min(CAUSE_OBJECTS, objects.size()));
        c.put("objects", named);
        if (objects.size() > CAUSE_OBJECTS) {
            c.put("moreObjects", objects.size() - CAUSE_OBJECTS);
        }
        return Json.write(c);
    }

    /** The cause of a version no event made (a compiler upgrade, a resync that completed a held cluster): why, in one key. */
    String causeWithoutEvents(String key, String why) {
        Map<String, Object> cause = new LinkedHashMap<>();
        cause.put(key, why);
        cause.put("events", 0);
        cause.put("topic", topics.events());
        cause.put("partition", partition);
        return Json.write(cause);
    }
}
