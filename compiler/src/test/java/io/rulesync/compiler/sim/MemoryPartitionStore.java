package io.rulesync.compiler.sim;

import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.store.Batch;
import io.rulesync.store.EventLog;
import io.rulesync.store.PartitionStore;
import io.rulesync.store.RecordedAction;
import io.rulesync.store.StaleWriteException;
import io.rulesync.store.StoreException;
import io.rulesync.store.VersionHistory;
import io.rulesync.store.WriterFencedException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The rules of the compiler's PostgreSQL stores ({@code BatchStore}, {@code EventLog}, {@code VersionHistory},
 * {@code NodeLabelStore}) held in memory, for the seeded simulation: a batch is written whole or not at all, fenced by
 * the stored position and by the writer's claim; a version must follow its cluster's head; an action is carried out only
 * while pending; an event is stored once per (epoch, offset). {@code MemoryStoreContractTest} runs one script against
 * this and against PostgreSQL and compares what each stored.
 *
 * <p>Not thread-safe: the simulation runs one step at a time.
 */
public final class MemoryPartitionStore {
    /** A stored event: {@code id} as PostgreSQL's sequence would give it. */
    public record Event(
            long id,
            String cluster,
            int partition,
            int epoch,
            long offset,
            String type,
            String payload,
            Long versionSeq) {}

    /** A stored version, with its whole rules (PostgreSQL keeps what changed, and reads the rest back). */
    public record Version(Batch.VersionRow row, ClusterRules rules, boolean pinnedBefore, boolean acted) {
        public long seq() {
            return row.seq();
        }

        public String cause() {
            return row.cause();
        }

        public String settings() {
            return row.settings();
        }
    }

    /** A stored operator action. */
    public static final class Action {
        final long id;
        final String cluster;
        final String kind;
        final Long toVersion;
        String status = "pending";
        Long resultVersion;

        Action(long id, String cluster, String kind, Long toVersion) {
            this.id = id;
            this.cluster = cluster;
            this.kind = kind;
            this.toVersion = toVersion;
        }
    }

    /**
     * A rule of the real store left out on purpose: the simulation must notice each (CompilerSimulationTest), or its
     * checks prove nothing.
     */
    public enum Defect {
        NONE,
        /** Every tenth commit keeps its position but loses its events. */
        DROP_EVENTS,
        /** A batch is written whatever the stored position: a writer that read before another moved on writes again. */
        NO_POSITION_FENCE,
        /** A writer whose claim was taken over may still write. */
        NO_WRITER_FENCE
    }

    /** What a commit does besides succeeding: fail before writing, or write and then fail (the outcome unknown to the caller). */
    public enum Trouble {
        NONE,
        FAIL_BEFORE,
        FAIL_AFTER
    }

    private final Map<String, LogPosition> positions = new HashMap<>();
    private final Map<Integer, Long> claims = new HashMap<>();
    private final List<Event> events = new ArrayList<>();
    private final List<Batch.DeadLetterRow> deadLetters = new ArrayList<>();
    private final Map<String, List<Version>> versions = new TreeMap<>();
    private final Map<Long, Action> actions = new LinkedHashMap<>();
    private final List<Batch.OutboxRow> outbox = new ArrayList<>();
    private final Map<String, EventLog.StoredCheckpoint> checkpoints = new HashMap<>();
    private final Map<String, Map<String, Map<String, String>>> labels = new HashMap<>();
    private long nextEventId = 1;
    /** Counts every change: a writer that must not write shows as a change of this. */
    private long changes;

    private Trouble nextCommit = Trouble.NONE;
    private final Defect defect;
    private int commits;

    public MemoryPartitionStore() {
        this(Defect.NONE);
    }

    public MemoryPartitionStore(Defect defect) {
        this.defect = defect;
    }

    /** The next commit (only) fails as said. */
    public void troubleNextCommit(Trouble t) {
        nextCommit = t;
    }

    /** Gives {@code partition} to a new writer and returns its claim: the previous one's commits are refused from now on. */
    public long claim(int partition) {
        long epoch = claims.getOrDefault(partition, 0L) + 1;
        claims.put(partition, epoch);
        return epoch;
    }

    /**
     * Records an operator action as the api does (pending), before its event is published; false, recording nothing, when
     * one of the cluster is pending still (the unique index {@code operator_action_one_pending}: the api answers 409).
     */
    public boolean recordAction(long id, String cluster, String kind, Long toVersion) {
        if (actions.values().stream().anyMatch(a -> a.cluster.equals(cluster) && a.status.equals("pending"))) {
            return false;
        }
        actions.put(id, new Action(id, cluster, kind, toVersion));
        changes++;
        return true;
    }

    public long changes() {
        return changes;
    }

    public List<Event> events() {
        return List.copyOf(events);
    }

    public List<Batch.DeadLetterRow> deadLetters() {
        return List.copyOf(deadLetters);
    }

    public List<Version> versions(String cluster) {
        return List.copyOf(versions.getOrDefault(cluster, List.of()));
    }

    public List<Batch.OutboxRow> outbox() {
        return List.copyOf(outbox);
    }

    public Map<Long, Action> actions() {
        return Map.copyOf(actions);
    }

    public String actionStatusOf(long id) {
        return actions.get(id).status;
    }

    /** The stores as the compiler sees them, written as the holder of claim {@code claim} on {@code partition}. */
    public PartitionStore as(int partition, long claim) {
        return new PartitionStore(new Writes(partition, claim), new Events(), new Versions(), this::reconcile);
    }

    private final class Writes implements PartitionStore.Writes {
        private final int partition;
        private final long claim;

        Writes(int partition, long claim) {
            this.partition = partition;
            this.claim = claim;
        }

        @Override
        public Optional<LogPosition> position(String group, String topic, int p) {
            return Optional.ofNullable(positions.get(key(group, topic, p)));
        }

        @Override
        public void movePosition(
                String group,
                String topic,
                int p,
                Optional<LogPosition> expected,
                LogPosition next,
                List<Batch.OutboxRow> rows)
                throws StaleWriteException {
            fence(topic, p);
            LogPosition stored = positions.get(key(group, topic, p));
            boolean same = expected.isEmpty()
                    ? stored == null
                    : stored != null
                            && stored.next() == expected.get().next()
                            && stored.epoch() == expected.get().epoch();
            if (!same) {
                throw new StaleWriteException("position of " + topic + "/" + p + " moved since " + expected);
            }
            positions.put(key(group, topic, p), next);
            outbox.addAll(rows);
            changes++;
        }

        @Override
        public Map<String, Long> commit(Batch b) throws StaleWriteException {
            Trouble t = nextCommit;
            nextCommit = Trouble.NONE;
            if (t == Trouble.FAIL_BEFORE) {
                throw new StoreException(
                        "commit of " + b.topic() + "/" + b.partition() + " failed",
                        new RuntimeException("connection lost"));
            }
            Map<String, Long> out = write(b);
            if (t == Trouble.FAIL_AFTER) {
                // Committed, but the answer was lost: the caller cannot tell this from a failure.
                throw new StoreException(
                        "commit of " + b.topic() + "/" + b.partition() + " failed",
                        new RuntimeException("connection lost"));
            }
            return out;
        }

        private Map<String, Long> write(Batch b) throws StaleWriteException {
            fence(b.topic(), b.partition());
            String key = key(b.group(), b.topic(), b.partition());
            LogPosition stored = positions.get(key);
            if (defect != Defect.NO_POSITION_FENCE
                    && (b.expectedPosition() < 0
                            ? stored != null
                            : stored == null || stored.next() != b.expectedPosition() || stored.epoch() != b.epoch())) {
                throw new StaleWriteException(
                        "position of " + b.topic() + "/" + b.partition() + " moved since " + b.expectedPosition());
            }
            // Checked before anything is written: the transaction writes all or nothing.
            Map<String, Long> heads = new HashMap<>();
            for (Batch.VersionRow v : b.versions()) {
                long head = heads.computeIfAbsent(v.cluster(), MemoryPartitionStore.this::headOf);
                if (v.seq() != head + 1) {
                    throw new StaleWriteException("head of " + v.cluster() + " is no longer " + (v.seq() - 1));
                }
                heads.put(v.cluster(), v.seq());
            }
            for (Batch.ActionRow a : b.actions()) {
                Action stored2 = actions.get(a.id());
                if (stored2 == null || !stored2.status.equals("pending")) {
                    throw new StaleWriteException("operator action " + a.id() + " is no longer pending");
                }
            }
            for (Batch.EventRow e : b.events()) {
                if (defect != Defect.NO_POSITION_FENCE
                        && events.stream()
                                .anyMatch(x -> x.partition() == b.partition()
                                        && x.epoch() == b.epoch()
                                        && x.offset() == e.offset())) {
                    throw new StaleWriteException("already written by another instance: event at offset " + e.offset());
                }
            }
            positions.put(
                    key,
                    stored == null
                            ? new LogPosition(b.newPosition(), b.epoch(), null, 0, b.newPosition())
                            : stored.advancedTo(b.newPosition()));
            for (Batch.VersionRow v : b.versions()) {
                List<Version> list = versions.computeIfAbsent(v.cluster(), c -> new ArrayList<>());
                ClusterRules parent = list.isEmpty()
                        ? ClusterRules.EMPTY
                        : list.get(list.size() - 1).rules();
                boolean pinnedBefore = pinning(v.cluster()).isPresent();
                boolean acted = b.actions().stream()
                        .anyMatch(a -> Objects.equals(a.resultVersion(), v.seq())
                                && actions.get(a.id()).cluster.equals(v.cluster()));
                list.add(new Version(v, v.diff().applyTo(parent), pinnedBefore, acted));
            }
            for (Batch.ActionRow a : b.actions()) {
                Action stored2 = actions.get(a.id());
                stored2.status = a.resultVersion() != null ? "done" : "rejected";
                stored2.resultVersion = a.resultVersion();
            }
            boolean drop = defect == Defect.DROP_EVENTS && ++commits % 10 == 0;
            for (Batch.EventRow e : drop ? List.<Batch.EventRow>of() : b.events()) {
                events.add(new Event(
                        nextEventId++,
                        e.cluster(),
                        b.partition(),
                        b.epoch(),
                        e.offset(),
                        e.type(),
                        e.payload(),
                        e.versionSeq()));
            }
            deadLetters.addAll(b.deadLetters());
            for (Batch.NodeLabelRow r : b.nodeLabels()) {
                Map<String, Map<String, String>> nodes = labels.computeIfAbsent(r.cluster(), c -> new TreeMap<>());
                if (r.labels() == null) {
                    nodes.remove(r.node());
                } else {
                    nodes.put(r.node(), new TreeMap<>(r.labels()));
                }
            }
            outbox.addAll(b.outbox());
            changes++;
            Map<String, Long> last = new TreeMap<>();
            for (String cluster : b.checkpointsDue()) {
                events.stream()
                        .filter(e -> e.cluster().equals(cluster))
                        .mapToLong(Event::id)
                        .max()
                        .ifPresent(id -> last.put(cluster, id));
            }
            return last;
        }

        private void fence(String topic, int p) throws WriterFencedException {
            if (p != partition) {
                throw new IllegalArgumentException(
                        "a store fenced by a claim on partition " + partition + " cannot write " + p);
            }
            long holder = claims.getOrDefault(partition, 0L);
            if (holder != claim && defect != Defect.NO_WRITER_FENCE) {
                throw new WriterFencedException(
                        topic + "/" + p + " is no longer written by claim " + claim + ": claim " + holder + " holds it",
                        null);
            }
        }

        @Override
        public void writeCheckpoint(Batch.CheckpointRow c) {
            EventLog.StoredCheckpoint now = checkpoints.get(c.cluster());
            if (now == null || now.lastEventId() < c.lastEventId()) {
                checkpoints.put(
                        c.cluster(),
                        new EventLog.StoredCheckpoint(
                                c.cluster(), c.lastEventId(), c.versionSeq(), c.objects(), c.text(), c.createdAt()));
                changes++;
            }
        }

        @Override
        public void enqueue(List<Batch.OutboxRow> rows) {
            outbox.addAll(rows);
            changes++;
        }

        @Override
        public Optional<String> actionStatus(long id, String cluster) {
            Action a = actions.get(id);
            return a == null || !a.cluster.equals(cluster) ? Optional.empty() : Optional.of(a.status);
        }
    }

    private final class Events implements PartitionStore.Events {
        @Override
        public List<String> clustersOn(String topic, int partition) {
            return List.copyOf(new TreeSet<>(events.stream()
                    .filter(e -> e.partition() == partition)
                    .map(Event::cluster)
                    .toList()));
        }

        @Override
        public Optional<EventLog.StoredCheckpoint> checkpoint(String cluster) {
            return Optional.ofNullable(checkpoints.get(cluster));
        }

        @Override
        public long removedBefore(String cluster) {
            return 0; // the simulation has no retention
        }

        @Override
        public List<String> eventPayloadsAfter(String cluster, long afterId) {
            return events.stream()
                    .filter(e -> e.cluster().equals(cluster)
                            && e.id() > afterId
                            && !e.type().equals("part"))
                    .map(Event::payload)
                    .toList();
        }

        @Override
        public List<String> pendingParts(String cluster) {
            long lastWhole = events.stream()
                    .filter(e -> e.cluster().equals(cluster) && !e.type().equals("part"))
                    .mapToLong(Event::id)
                    .max()
                    .orElse(0);
            return events.stream()
                    .filter(e -> e.cluster().equals(cluster) && e.type().equals("part") && e.id() > lastWhole)
                    .map(Event::payload)
                    .toList();
        }
    }

    private final class Versions implements PartitionStore.Versions {
        @Override
        public long head(String cluster) {
            return headOf(cluster);
        }

        @Override
        public Optional<String> lineage(String cluster, long seq) {
            return find(cluster, seq).map(v -> v.row().lineage());
        }

        @Override
        public Optional<RecordedAction> pinning(String cluster) {
            return MemoryPartitionStore.this.pinning(cluster);
        }

        @Override
        public ClusterRules rules(String cluster, long seq) {
            return find(cluster, seq).map(Version::rules).orElse(ClusterRules.EMPTY);
        }

        @Override
        public Optional<VersionHistory.VersionInfo> version(String cluster, long seq) {
            return find(cluster, seq)
                    .map(v -> new VersionHistory.VersionInfo(
                            cluster,
                            seq,
                            v.row().createdAt(),
                            v.cause(),
                            v.settings(),
                            v.row().diff().fragments().size(),
                            v.row().diff().nodes().size(),
                            v.row().lineage()));
        }

        private Optional<Version> find(String cluster, long seq) {
            return versions.getOrDefault(cluster, List.of()).stream()
                    .filter(v -> v.seq() == seq)
                    .findFirst();
        }
    }

    private long headOf(String cluster) {
        List<Version> list = versions.getOrDefault(cluster, List.of());
        return list.isEmpty() ? 0 : list.get(list.size() - 1).seq();
    }

    /** The rollback that pins {@code cluster}: its carried-out action of the newest version, when that is a rollback. */
    public Optional<RecordedAction> pinning(String cluster) {
        return actions.values().stream()
                .filter(a -> a.cluster.equals(cluster) && a.status.equals("done"))
                .max((x, y) -> Long.compare(x.resultVersion, y.resultVersion))
                .filter(a -> a.kind.equals("rollback"))
                .map(a -> new RecordedAction(
                        a.id,
                        a.cluster,
                        a.kind,
                        a.toVersion,
                        "sim",
                        "sim",
                        Instant.EPOCH,
                        a.status,
                        a.resultVersion,
                        null,
                        null));
    }

    private int reconcile(String cluster, Map<String, ? extends Map<String, String>> nodes) {
        Map<String, Map<String, String>> stored = labels.computeIfAbsent(cluster, c -> new TreeMap<>());
        int changed = 0;
        for (String node : new TreeSet<>(stored.keySet())) {
            if (!nodes.containsKey(node)) {
                stored.remove(node);
                changed++;
            }
        }
        for (Map.Entry<String, ? extends Map<String, String>> e : nodes.entrySet()) {
            if (!new TreeMap<>(e.getValue()).equals(stored.get(e.getKey()))) {
                stored.put(e.getKey(), new TreeMap<>(e.getValue()));
                changed++;
            }
        }
        if (changed > 0) {
            changes++;
        }
        return changed;
    }

    public Map<String, Map<String, String>> labels(String cluster) {
        return Map.copyOf(labels.getOrDefault(cluster, Map.of()));
    }

    private static String key(String group, String topic, int partition) {
        return group + "\0" + topic + "\0" + partition;
    }
}
