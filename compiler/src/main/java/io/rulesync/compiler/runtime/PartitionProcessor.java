package io.rulesync.compiler.runtime;

import io.rulesync.compiler.checkpoint.Checkpoint;
import io.rulesync.compiler.eventlog.EventAssembly;
import io.rulesync.compiler.eventlog.LiveLog;
import io.rulesync.compiler.eventlog.LogCheck;
import io.rulesync.compiler.fold.ProblemReports;
import io.rulesync.compiler.runtime.BatchRows.Decoded;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.OperatorAction;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.text.Printable;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.store.EventLog;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.PartitionStore;
import io.rulesync.store.StaleWriteException;
import io.rulesync.store.WriterFencedException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiles the clusters whose events live in one partition. Each batch of records becomes one
 * transaction: the events, the new versions (at most one per cluster per batch, which is how bursts
 * coalesce), the deltas and dead letters as outbox rows, and the position after the batch. The
 * in-memory heads are adopted only after that transaction commits, so a crash anywhere leaves the
 * database and memory consistent; a new processor rebuilds from the database.
 *
 * <p>The stored position belongs to one log ({@link LogPosition}); {@link #reconcile} checks it against
 * the live log and, when the compiler cannot know that it saw every event, resumes at what the live
 * log holds and asks the watchers for a resync. So does a watcher's {@link StateDigest} that
 * disagrees with what was folded.
 *
 * <p>Every {@code checkpointEvery} stored events of a cluster, the batch's transaction names the event
 * the cluster's {@link Checkpoint} will stand for, and the checkpoint is written after the commit, on the
 * checkpoint writer. A rebuild folds the newest checkpoint and the events after it, so it costs what the
 * cluster holds rather than how long it has existed. A checkpoint that does not read back as what was
 * written is ignored with one line, the whole log is replayed, and the next batch writes a new one.
 *
 * <p>Problem reports (objects a watcher refused) are stored as events and, as the current problems of
 * each source, in {@code cluster_problem} in the batch's transaction; they never make a version.
 *
 * <p>Framework-free: the Kafka listener around it only hands over records, observes the log, and
 * seeks where asked.
 */
public final class PartitionProcessor {
    private static final Logger log = LoggerFactory.getLogger(PartitionProcessor.class);
    /**
     * The source under which the compiler stores its own findings ({@link ClusterHead#admissionProblems()}) beside
     * the watcher's reports. Not a path or an object key, so no watcher report can replace or clear it.
     */
    public static final String ADMISSION_SOURCE = "compiler: admission";

    /** One consumed record. */
    public record Record(long offset, String key, String value) {}

    /** What happened to a batch. */
    public enum Outcome {
        /** Committed (or nothing to do). */
        DONE,
        /** Another instance moved on; state was rebuilt, consume again from {@link #position()}. */
        STALE
    }

    /**
     * Another compiler holds this partition now ({@link io.rulesync.store.PartitionWriters}): nothing was written, and
     * this processor must write no more. Thrown wherever the processor writes.
     */
    public static final class Fenced extends RuntimeException {
        private final transient io.rulesync.store.PartitionWriters.Holder holder;

        Fenced(WriterFencedException refusal) {
            super(refusal.getMessage(), refusal, false, false);
            this.holder = refusal.holder();
        }

        /** Who holds the partition now (null: nobody). */
        public io.rulesync.store.PartitionWriters.Holder holder() {
            return holder;
        }
    }

    /** Places where a test may simulate a crash. */
    public enum Point {
        BEFORE_COMMIT,
        AFTER_COMMIT
    }

    public interface Faults {
        Faults NONE = p -> {};

        void at(Point point);

        /** Before each record of a batch is read: a test may fail here, as a compiler bug that one record triggers would. */
        default void reading(Record r) {}
    }

    /** Told about every stored version, after its transaction committed. */
    public interface VersionListener {
        VersionListener NONE = (cluster, seq, diff, cause) -> {};

        void stored(String cluster, long seq, RulesDiff diff, String cause);
    }

    /** Told, after the fact, about digests checked, resyncs asked for and positions reset (for metrics). */
    public interface Observer {
        Observer NONE = new Observer() {};

        default void digestChecked(String cluster, boolean agrees) {}

        default void resyncRequested(String cluster) {}

        default void positionReset(int partition) {}

        /** What {@link ClusterHead#admissionProblems()} says of a cluster changed (or was first seen by this processor). */
        default void admissionProblemsChanged(String cluster, List<Problem> problems) {}

        /** The objects a cluster's watcher refused, as now folded (after a batch changed them, and after a rebuild). */
        default void refusedObjects(String cluster, int count) {}

        /** Records of the events topic refused as dead letters in a committed batch. */
        default void deadLettered(int count) {}
    }

    /** How often at most one cluster's watcher is asked for a resync after a disagreeing digest. */
    public static final Duration DEFAULT_RESYNC_COOLDOWN = Duration.ofMinutes(1);
    /**
     * Stored events of a cluster between checkpoints: what a rebuild replays at most after the newest one. A
     * checkpoint of a 10,000-Service cluster is about 20,000 lines (21 MB of text, about half a second to write),
     * so once per this many events.
     */
    public static final int DEFAULT_CHECKPOINT_EVERY = 10_000;

    private final PartitionStore store;
    private final Topics topics;
    private final String group;
    private final int partition;
    private final Clock clock;
    private final Faults faults;
    private final VersionListener listener;
    private final Observer observer;
    private final Duration resyncCooldown;
    private final int checkpointEvery;
    private final Executor checkpointWriter;
    private final BatchRows rows;
    private final Map<String, ClusterHead> heads = new HashMap<>();
    /**
     * The parts received so far of each cluster's event that is too large for one message ({@link EventParts}).
     * They are stored as events of type {@code part} too, so a rebuild restores them.
     */
    private EventAssembly assembly = EventAssembly.EMPTY;
    /** Stored events of each cluster that its newest checkpoint does not hold (as many as its log when it has none). */
    private final Map<String, Long> sinceCheckpoint = new HashMap<>();
    /**
     * Clusters whose folded state is known to be incomplete, and why: retention removed the start of the log and the
     * checkpoint standing for it does not read back. They publish no version until a watcher's digest agrees (the
     * resync asked for at the rebuild).
     */
    private final Map<String, String> held = new HashMap<>();
    /** When each cluster's watcher was last asked for a resync (in memory: a restart may ask once more). */
    private final Map<String, Instant> resyncAsked = new HashMap<>();
    /** Each cluster's problems as last logged, so that they are logged once per change, not per batch or rebuild. */
    private final Map<String, List<Problem>> reported = new HashMap<>();

    private LogPosition position;

    public PartitionProcessor(
            PartitionStore store,
            Topics topics,
            String group,
            int partition,
            Clock clock,
            Faults faults,
            VersionListener listener) {
        this(store, topics, group, partition, clock, faults, listener, Observer.NONE, DEFAULT_RESYNC_COOLDOWN);
    }

    public PartitionProcessor(
            PartitionStore store,
            Topics topics,
            String group,
            int partition,
            Clock clock,
            Faults faults,
            VersionListener listener,
            Observer observer,
            Duration resyncCooldown) {
        this(
                store,
                topics,
                group,
                partition,
                clock,
                faults,
                listener,
                observer,
                resyncCooldown,
                DEFAULT_CHECKPOINT_EVERY);
    }

    public PartitionProcessor(
            PartitionStore store,
            Topics topics,
            String group,
            int partition,
            Clock clock,
            Faults faults,
            VersionListener listener,
            Observer observer,
            Duration resyncCooldown,
            int checkpointEvery) {
        this(
                store,
                topics,
                group,
                partition,
                clock,
                faults,
                listener,
                observer,
                resyncCooldown,
                checkpointEvery,
                Runnable::run);
    }

    /**
     * {@code checkpointWriter} runs the writing of checkpoints, after their batch committed: the service gives a
     * thread of its own, so that a batch never waits for one (a 10,000-Service checkpoint takes about half a
     * second to write); tests and benchmarks run it in place.
     */
    public PartitionProcessor(
            PartitionStore store,
            Topics topics,
            String group,
            int partition,
            Clock clock,
            Faults faults,
            VersionListener listener,
            Observer observer,
            Duration resyncCooldown,
            int checkpointEvery,
            Executor checkpointWriter) {
        this.checkpointWriter = Objects.requireNonNull(checkpointWriter, "checkpointWriter");
        if (checkpointEvery < 1) {
            throw new IllegalArgumentException("checkpointEvery must be at least 1, not " + checkpointEvery);
        }
        this.checkpointEvery = checkpointEvery;
        this.store = Objects.requireNonNull(store, "store");
        this.topics = Objects.requireNonNull(topics, "topics");
        this.rows = new BatchRows(topics, partition);
        this.group = Objects.requireNonNull(group, "group");
        this.partition = partition;
        this.clock = clock;
        this.faults = faults;
        this.listener = listener;
        this.observer = Objects.requireNonNull(observer, "observer");
        this.resyncCooldown = Objects.requireNonNull(resyncCooldown, "resyncCooldown");
        rebuild();
    }

    /** The next offset to consume; -1 when nothing was ever stored (start from the beginning). */
    public long position() {
        return position == null ? -1 : position.next();
    }

    /** The stored position with its log's identity; empty when none was stored. */
    public Optional<LogPosition> logPosition() {
        return Optional.ofNullable(position);
    }

    public int partition() {
        return partition;
    }

    /** The clusters this processor holds, by name. */
    public Map<String, ClusterHead> heads() {
        return Map.copyOf(heads);
    }

    /**
     * Reloads the position and every cluster of this partition from the database: each cluster from its
     * newest checkpoint (when it reads back as written) and the events stored after it.
     */
    public void rebuild() {
        position = store.writes().position(group, topics.events(), partition).orElse(null);
        heads.clear();
        sinceCheckpoint.clear();
        held.clear();
        assembly = EventAssembly.EMPTY;
        for (String cluster : store.events().clustersOn(topics.events(), partition)) {
            rebuild(cluster);
        }
        heads.forEach((cluster, head) ->
                observer.refusedObjects(cluster, head.problems().refusedObjects()));
        if (!held.isEmpty()) {
            Instant now = clock.instant();
            List<Batch.OutboxRow> resyncs = new ArrayList<>();
            held.forEach((cluster, why) -> resyncs.add(
                    rows.resync(cluster, "the compiler's state of the cluster is incomplete: " + why, now)));
            store.writes().enqueue(resyncs);
            resyncs.forEach(row -> {
                resyncAsked.put(row.key(), now);
                observer.resyncRequested(row.key());
            });
        }
    }

    /**
     * One cluster, from its newest checkpoint (when it reads back as written) and the events stored after it: its head,
     * its pending parts, its count since the checkpoint, and whether it is held (the start of its log is gone and no
     * checkpoint stands for it). Its stored node labels are checked against the folded state.
     */
    private void rebuild(String cluster) {
        List<ClusterEvent> events = new ArrayList<>();
        long after = 0;
        Optional<EventLog.StoredCheckpoint> stored = store.events().checkpoint(cluster);
        String unusable = stored.isEmpty() ? "it has no checkpoint" : null;
        if (stored.isPresent()) {
            Checkpoint.Read read = Checkpoint.read(cluster, stored.get().text());
            if (read instanceof Checkpoint.Read.Usable u) {
                events.addAll(u.events());
                after = stored.get().lastEventId();
            } else {
                unusable = "its checkpoint at event " + stored.get().lastEventId() + " (version "
                        + stored.get().versionSeq() + ") is not used: "
                        + ((Checkpoint.Read.Unusable) read).reason();
            }
        }
        long removedBefore = unusable == null ? 0 : store.events().removedBefore(cluster);
        if (removedBefore > 0) {
            held.put(cluster, "retention removed its events before event " + removedBefore + " and " + unusable);
            log.warn(
                    "cluster {}: retention removed its events before event {} and {}; rebuilt from the events kept, it "
                            + "publishes no version until its watcher's resync completes (asked for now)",
                    cluster,
                    removedBefore,
                    unusable);
        } else if (stored.isPresent() && unusable != null) {
            log.warn(
                    "cluster {}: {}; rebuilt from the whole log instead, and a new checkpoint is written with its next batch",
                    cluster,
                    unusable);
        }
        boolean fromCheckpoint = after > 0;
        List<String> payloads = store.events().eventPayloadsAfter(cluster, after);
        // No usable checkpoint: due with the next batch. Otherwise: due after what the interval leaves.
        sinceCheckpoint.put(cluster, fromCheckpoint || stored.isEmpty() ? payloads.size() : (long) checkpointEvery);
        int refused = 0;
        String firstReason = null;
        for (String payload : payloads) {
            // Stored events were valid when stored, and the codec is versioned. A decoder that became
            // stricter (special addresses, say) refuses some: they are left out, as they would be
            // dead letters if they arrived now, and the next version drops their rules.
            EventCodec.Decoded d = EventCodec.decode(payload);
            if (d instanceof EventCodec.Decoded.Valid v) {
                events.add(v.event());
            } else {
                refused++;
                firstReason = firstReason == null ? ((EventCodec.Decoded.Invalid) d).reason() : firstReason;
            }
        }
        if (refused > 0) {
            log.warn(
                    "cluster {}: {} stored event(s) are refused by this compiler and left out of its rebuild; the first: {}",
                    cluster,
                    refused,
                    firstReason);
        }
        List<EventParts.Part> pending = new ArrayList<>();
        for (String payload : store.events().pendingParts(cluster)) {
            EventParts.read(payload).ifPresent(pending::add); // stored, so valid when stored
        }
        assembly = assembly.restored(cluster, pending);
        long version = store.versions().head(cluster);
        ClusterHead.Pin pin = store.versions()
                .pinning(cluster)
                .map(a -> new ClusterHead.Pin(a.id(), a.toVersion()))
                .orElse(null);
        ClusterHead head = ClusterHead.rebuilt(
                cluster,
                events,
                version,
                store.versions().rules(cluster, version),
                pin,
                store.versions().lineage(cluster, version).orElse(Lineage.UNKNOWN));
        heads.put(cluster, head);
        report(cluster, head.admissionProblems());
        int relabelled = store.labels().reconcile(cluster, labels(head));
        if (relabelled > 0) {
            log.info(
                    "cluster {}: the stored labels of {} node(s) were not those of its folded state (stored before "
                            + "labels were, or by a batch that did not commit); rewritten",
                    cluster,
                    relabelled);
        }
    }

    /** Each node of the head's folded state and its labels. */
    private static SortedMap<String, SortedMap<String, String>> labels(ClusterHead head) {
        SortedMap<String, SortedMap<String, String>> out = new TreeMap<>();
        head.view().state().nodes().forEach(n -> out.put(n.name(), n.labels()));
        return out;
    }

    /** Whether folding {@code e} may change a Node (and so its labels). */
    private static boolean touchesNodes(ClusterEvent e) {
        return e instanceof ObjectUpserted u && u.object() instanceof Node
                || e instanceof ObjectDeleted d && d.ref().kind() == ObjectKind.NODE
                || e instanceof SyncMarker m && m.kind() == ObjectKind.NODE;
    }

    /** The clusters that publish no version until their watcher's resync completes, and why. */
    public Map<String, String> held() {
        return Map.copyOf(held);
    }

    /**
     * Writes {@code head}'s checkpoint, standing for the cluster's events up to {@code lastEventId}, on the
     * checkpoint writer. A failure costs only the shortcut: one line, and the next checkpoint is due after
     * another interval (a rebuild meanwhile replays from the previous one).
     */
    private void writeCheckpoint(ClusterHead head, long lastEventId, Instant now) {
        checkpointWriter.execute(() -> {
            try {
                store.writes()
                        .writeCheckpoint(new Batch.CheckpointRow(
                                head.cluster(),
                                lastEventId,
                                head.version(),
                                head.view().state().objectCount(),
                                Checkpoint.write(head, now),
                                now));
            } catch (RuntimeException e) {
                log.warn(
                        "cluster {}: writing its checkpoint at event {} failed ({}); a rebuild replays from the previous one",
                        head.cluster(),
                        lastEventId,
                        e.getMessage());
            }
        });
    }

    /**
     * Stores a version of each cluster that today's compiler compiles differently from its newest stored
     * version ({@link ClusterHead#recompiled}: cause {@code compilerUpgrade}), before any new event is folded,
     * so that every later version's diff shows only what its events changed. Called once a partition is
     * assigned and its position checked. Returns the clusters that got one; none when the batch is stale
     * (another instance owns the partition now, and does the same).
     */
    public List<String> storeRecompiledVersions() {
        Instant now = clock.instant();
        List<Batch.VersionRow> versions = new ArrayList<>();
        List<Batch.OutboxRow> outbox = new ArrayList<>();
        Map<String, ClusterHead> next = new TreeMap<>();
        for (Map.Entry<String, ClusterHead> e : new TreeMap<>(heads).entrySet()) {
            // A held cluster's state is incomplete: what it compiles to is no upgrade.
            Optional<ClusterHead.Step> step = held.containsKey(e.getKey())
                    ? Optional.empty()
                    : e.getValue().recompiled();
            if (step.isEmpty()) {
                continue;
            }
            String cluster = e.getKey();
            long seq = step.get().next().version();
            String cause = rows.causeWithoutEvents(
                    "compilerUpgrade",
                    "this compiler compiles the same events into different rules than " + "version " + (seq - 1)
                            + " holds; this version publishes them before any new event");
            rows.version(cluster, e.getValue().lineage(), step.get(), cause, now, versions, outbox);
            next.put(cluster, step.get().next());
        }
        if (versions.isEmpty() || position == null) {
            return List.of();
        }
        long at = position.next();
        try {
            store.writes()
                    .commit(new Batch(
                            group,
                            topics.events(),
                            partition,
                            at,
                            at,
                            List.of(),
                            List.of(),
                            versions,
                            List.of(),
                            outbox,
                            position.epoch()));
        } catch (WriterFencedException fenced) {
            throw new Fenced(fenced);
        } catch (StaleWriteException stale) {
            rebuild();
            return List.of();
        }
        heads.putAll(next);
        for (Batch.VersionRow v : versions) {
            log.atWarn()
                    .addKeyValue("cluster", v.cluster())
                    .addKeyValue("version", v.seq())
                    .addKeyValue("fragments", v.diff().fragments().size())
                    .addKeyValue("nodes", v.diff().nodes().size())
                    .log(
                            "cluster {}: this compiler compiles its events differently from version {}; stored version {} (cause: "
                                    + "compiler upgrade) before any new event",
                            v.cluster(),
                            v.seq() - 1,
                            v.seq());
            listener.stored(v.cluster(), v.seq(), v.diff(), v.cause());
        }
        return List.copyOf(next.keySet());
    }

    /**
     * Logs a cluster's problems when they differ from what was logged last (one line per problem
     * that appeared, one per problem resolved), and tells the observer.
     */
    private void report(String cluster, List<Problem> now) {
        List<Problem> before = reported.getOrDefault(cluster, List.of());
        if (before.equals(now) && reported.containsKey(cluster)) {
            return;
        }
        for (Problem p : now) {
            if (!before.contains(p)) {
                log.warn("cluster {}: {}", cluster, p);
            }
        }
        for (Problem p : before) {
            if (!now.contains(p)) {
                log.info("cluster {}: resolved: {}", cluster, p);
            }
        }
        reported.put(cluster, now);
        observer.admissionProblemsChanged(cluster, now);
    }

    /**
     * Checks the stored position against the live log and stores the verdict: the same log (its
     * identity refreshed), adopted, or reset, in which case every cluster of this partition is
     * rebuilt from the database and its watcher asked for a resync, and one line says why. The
     * consumer must then seek to {@link #position()}.
     */
    public LogCheck.Verdict reconcile(LiveLog live) {
        for (int attempt = 0; ; attempt++) {
            Optional<LogPosition> stored = Optional.ofNullable(position);
            LogCheck.Verdict v = LogCheck.judge(stored, live);
            if (v instanceof LogCheck.Verdict.Same && v.position().equals(position)) {
                return v;
            }
            Instant now = clock.instant();
            List<Batch.OutboxRow> resyncs = new ArrayList<>();
            if (v instanceof LogCheck.Verdict.Reset r) {
                for (String cluster : new TreeSet<>(heads.keySet())) {
                    resyncs.add(rows.resync(cluster, "events partition " + partition + ": " + r.reason(), now));
                }
            }
            try {
                store.writes().movePosition(group, topics.events(), partition, stored, v.position(), resyncs);
            } catch (WriterFencedException fenced) {
                throw new Fenced(fenced);
            } catch (StaleWriteException stale) {
                if (attempt > 2) {
                    throw new IllegalStateException(
                            "the position of partition " + partition + " keeps moving: " + stale.getMessage());
                }
                rebuild(); // another instance moved it: judge again from what it stored
                continue;
            }
            if (v instanceof LogCheck.Verdict.Reset r
                    && heads.isEmpty()
                    && stored.map(LogPosition::next).orElse(0L) == 0) {
                // Nothing was ever read from this partition: nothing can have been missed, and there is no one to
                // resync.
                log.debug(
                        "events partition {} ({}): {}; nothing was read from it, resuming at offset {}",
                        partition,
                        topics.events(),
                        r.reason(),
                        v.position().next());
                position = v.position();
            } else if (v instanceof LogCheck.Verdict.Reset r) {
                log.warn(
                        "events partition {} ({}): {}; resuming at offset {} (epoch {}), rebuilt from the database, and asked "
                                + "for a resync of {}",
                        partition,
                        topics.events(),
                        r.reason(),
                        v.position().next(),
                        v.position().epoch(),
                        heads.isEmpty()
                                ? "no cluster (none is stored from it)"
                                : heads.size() + " cluster(s): " + String.join(", ", new TreeSet<>(heads.keySet())));
                rebuild();
                resyncs.forEach(row -> {
                    resyncAsked.put(row.key(), now);
                    observer.resyncRequested(row.key());
                });
                observer.positionReset(partition);
            } else {
                if (v instanceof LogCheck.Verdict.Adopted a && a.note() != null) {
                    log.warn("events partition {} ({}): {}", partition, topics.events(), a.note());
                }
                position = v.position();
            }
            return v;
        }
    }

    public Outcome process(List<Record> records) {
        Plan plan = plan(records);
        if (plan == null) {
            return Outcome.DONE;
        }
        faults.at(Point.BEFORE_COMMIT);
        Map<String, Long> checkpointAt;
        try {
            checkpointAt = store.writes().commit(plan.batch());
        } catch (WriterFencedException fenced) {
            throw new Fenced(fenced);
        } catch (StaleWriteException stale) {
            rebuild();
            return Outcome.STALE;
        }
        faults.at(Point.AFTER_COMMIT);
        adopt(plan, checkpointAt);
        return Outcome.DONE;
    }

    /**
     * What a batch writes, and what the processor adopts once it committed. {@link #plan} makes it without writing
     * anything or changing the processor (it reads stored versions and actions); {@link #adopt} takes it in after the
     * commit, so a batch that fails or is found stale leaves the processor as it was.
     *
     * @param released held clusters whose watcher's digest agrees again: no longer held once this batch committed
     * @param warnings lines to log once committed (not on every retry of a failing batch)
     */
    private record Plan(
            Batch batch,
            Instant now,
            Map<String, ClusterHead> next,
            Map<String, Long> counted,
            EventAssembly assembled,
            List<Disagreement> digestsSeen,
            List<Disagreement> resyncsAsked,
            List<Carried> outcomes,
            Set<String> released,
            List<String> warnings) {}

    /**
     * A batch's records sorted out: the events, by cluster; the parts of events too large for one message, stored as
     * they come; and the records refused (not an event, not of the key's cluster, an operator action not pending), as
     * dead letters.
     */
    private record Intake(
            Map<String, List<Decoded>> byCluster,
            List<Batch.EventRow> parts,
            List<Batch.DeadLetterRow> dead,
            List<Batch.OutboxRow> deadLetterMessages,
            EventAssembly assembled,
            List<String> warnings) {}

    private Intake intake(List<Record> fresh) {
        List<String> warnings = new ArrayList<>();
        List<Batch.DeadLetterRow> dead = new ArrayList<>();
        List<Batch.OutboxRow> outbox = new ArrayList<>();
        Map<String, List<Decoded>> byCluster = new LinkedHashMap<>();
        Set<Long> actionsSeen = new HashSet<>();
        List<Batch.EventRow> partRows = new ArrayList<>();
        EventAssembly assembled = assembly;
        for (Record r : fresh) {
            faults.reading(r);
            String value = r.value();
            EventAssembly.Offer offer = assembled.offer(r.key(), r.value());
            assembled = offer.next();
            if (offer.outcome() instanceof EventAssembly.Outcome.Refused refused) {
                rows.deadLetter(r, refused.reason(), dead, outbox);
                continue;
            }
            if (offer.outcome() instanceof EventAssembly.Outcome.Stored stored) {
                EventParts.Part p = stored.part();
                if (!stored.abandoned().isEmpty()) {
                    warnings.add("cluster " + p.cluster() + ": event "
                            + stored.abandoned().get(0).event() + " stopped after "
                            + stored.abandoned().size() + " of "
                            + stored.abandoned().get(0).parts() + " parts; its parts are left unused");
                }
                partRows.add(rows.part(p, r));
                continue;
            }
            if (offer.outcome() instanceof EventAssembly.Outcome.Whole whole) {
                value = whole.json(); // the last part: the event, decoded and stored at this offset
            }
            EventCodec.Decoded d = EventCodec.decode(value);
            String reason = null;
            if (d instanceof EventCodec.Decoded.Invalid i) {
                reason = i.reason();
            } else if (!((EventCodec.Decoded.Valid) d).event().cluster().equals(r.key())) {
                reason = "record key '" + r.key() + "' is not the event's cluster '"
                        + ((EventCodec.Decoded.Valid) d).event().cluster() + "'";
            } else if (((EventCodec.Decoded.Valid) d).event() instanceof OperatorAction a) {
                reason = actionRefusal(a, actionsSeen);
            }
            if (reason != null) {
                rows.deadLetter(r, reason, dead, outbox);
            } else {
                ClusterEvent e = ((EventCodec.Decoded.Valid) d).event();
                byCluster
                        .computeIfAbsent(e.cluster(), k -> new ArrayList<>())
                        .add(new Decoded(new Record(r.offset(), r.key(), value), e));
            }
        }
        return new Intake(byCluster, partRows, dead, outbox, assembled, warnings);
    }

    /** The batch {@code records} make from the stored position on; null when none of them is new. */
    private Plan plan(List<Record> records) {
        long from = position();
        List<Record> fresh = records.stream().filter(r -> r.offset() >= from).toList();
        if (fresh.isEmpty()) {
            return null;
        }
        Instant now = clock.instant();
        Intake in = intake(fresh);
        Set<String> released = new HashSet<>();
        List<Batch.DeadLetterRow> dead = in.dead();
        List<Batch.OutboxRow> outbox = new ArrayList<>(in.deadLetterMessages());
        Map<String, List<Decoded>> byCluster = in.byCluster();
        List<Batch.EventRow> partRows = in.parts();
        EventAssembly assembled = in.assembled();

        Map<String, ClusterHead> next = new HashMap<>();
        List<Disagreement> resyncsAsked = new ArrayList<>();
        List<Disagreement> digestsSeen = new ArrayList<>();
        List<Batch.VersionRow> versions = new ArrayList<>();
        List<Batch.ActionRow> actions = new ArrayList<>();
        List<Carried> outcomes = new ArrayList<>();
        List<Batch.EventRow> events = new ArrayList<>();
        List<Batch.ProblemRow> problems = new ArrayList<>();
        List<Batch.NodeLabelRow> nodeLabels = new ArrayList<>();
        for (Map.Entry<String, List<Decoded>> e : byCluster.entrySet()) {
            String cluster = e.getKey();
            ClusterHead head = heads.getOrDefault(cluster, ClusterHead.empty(cluster));
            ClusterHead.Step step = head.apply(
                    e.getValue().stream().map(Decoded::event).toList(),
                    v -> store.versions()
                            .version(cluster, v)
                            .map(stored -> store.versions().rules(cluster, v)));
            String heldBecause = held.get(cluster);
            String releaseCause = null;
            if (heldBecause != null) {
                if (step.digests().stream().anyMatch(ClusterHead.DigestCheck::agrees)) {
                    // The watcher's digest says the folded state is whole again: publish from it, now (the resync's
                    // digest may come in a batch of its own). Released once this batch committed: a retry after a
                    // failed
                    // commit must catch up just the same.
                    released.add(cluster);
                    Optional<ClusterHead.Step> caughtUp =
                            step.newVersion() ? Optional.empty() : step.next().recompiled();
                    if (caughtUp.isPresent()) {
                        step = caughtUp.get();
                        releaseCause = rows.causeWithoutEvents(
                                "resync",
                                "the watcher's resync made the cluster's state whole again (" + heldBecause
                                        + "); this version publishes what it compiles to");
                    }
                } else {
                    step = head.withheld(
                            step,
                            "cluster " + cluster + " publishes no version until its watcher's resync completes: "
                                    + heldBecause);
                }
            }
            if (!step.next().awaitingListing().equals(head.awaitingListing())) {
                log.info(
                        "cluster {}: {}",
                        cluster,
                        step.next().awaitingListing().isEmpty()
                                ? "its watcher's first listing has come"
                                        + (step.newVersion()
                                                ? "; version " + step.next().version() + " publishes it"
                                                : "")
                                : "no version until its watcher's first listing has come (still to come: "
                                        + step.next().awaitingListing().stream()
                                                .map(ObjectKind::apiName)
                                                .collect(Collectors.joining(", "))
                                        + ")");
            }
            for (ClusterHead.DigestCheck check : step.digests()) {
                digestsSeen.add(new Disagreement(cluster, check));
                if (!check.agrees()
                        && resyncsAsked.stream().noneMatch(d -> d.cluster().equals(cluster))
                        && resyncDue(cluster, now)) {
                    outbox.add(rows.resync(
                            cluster,
                            "the watcher's state digest disagrees with what the compiler folded: "
                                    + String.join("; ", check.differences()),
                            now));
                    resyncsAsked.add(new Disagreement(cluster, check));
                }
            }
            if (e.getValue().stream().allMatch(d -> d.event() instanceof StateDigest) && !step.newVersion()) {
                // Digests change nothing: no version and no stored event may come of them (a cluster known only
                // from a digest has no stored events to be rebuilt from).
                continue;
            }
            Long seq = null;
            if (step.newVersion()) {
                seq = step.next().version();
                rows.version(
                        cluster,
                        head.lineage(),
                        step,
                        releaseCause != null ? releaseCause : rows.cause(e.getValue(), step.actions()),
                        now,
                        versions,
                        outbox);
            }
            for (ClusterHead.ActionOutcome o : step.actions()) {
                actions.add(new Batch.ActionRow(o.action().actionId(), o.accepted() ? seq : null, o.refusal()));
                outcomes.add(new Carried(cluster, o.accepted() ? seq : head.version(), o));
            }
            next.put(cluster, step.next());
            if (e.getValue().stream().anyMatch(d -> touchesNodes(d.event()))) {
                nodeLabels.addAll(NodeLabelStore.changes(cluster, labels(head), labels(step.next())));
            }
            step.next()
                    .problems()
                    .changedSince(head.problems())
                    .forEach((source, report) -> problems.add(
                            report == null
                                    ? new Batch.ProblemRow(cluster, source, List.of(), now)
                                    : new Batch.ProblemRow(cluster, source, report.problems(), report.observedAt())));
            if (!step.next().admissionProblems().equals(head.admissionProblems())) {
                // The compiler's own findings sit beside the watcher's reports, so the api shows both in one place.
                problems.add(new Batch.ProblemRow(
                        cluster, ADMISSION_SOURCE, step.next().admissionProblems(), now));
            }
            for (Decoded d : e.getValue()) {
                // A digest only checks what was folded; the rebuild does not need it, so it is not stored.
                if (!(d.event() instanceof StateDigest)) {
                    // A problem report never leads to a version, whatever else the batch did.
                    events.add(rows.event(d, ProblemReports.isProblemEvent(d.event()) ? null : seq));
                }
            }
        }

        events.addAll(partRows);
        // In log order: a cluster's parts before the event they make up, which is what a rebuild's pending parts rely
        // on.
        events.sort(Comparator.comparingLong(Batch.EventRow::offset));
        // Each cluster's stored events since its checkpoint, this batch's included (a batch of parts alone too).
        Map<String, Long> counted = new HashMap<>();
        events.forEach(row -> counted.merge(row.cluster(), 1L, Long::sum));
        counted.replaceAll((cluster, n) -> n + sinceCheckpoint.getOrDefault(cluster, 0L));
        List<String> checkpointsDue = new ArrayList<>();
        for (Map.Entry<String, ClusterHead> e : new TreeMap<>(next).entrySet()) {
            long since = counted.getOrDefault(e.getKey(), sinceCheckpoint.getOrDefault(e.getKey(), 0L));
            if (since >= checkpointEvery && e.getValue().version() > 0) {
                checkpointsDue.add(e.getKey());
                counted.put(e.getKey(), 0L);
            }
        }

        long newPosition = fresh.get(fresh.size() - 1).offset() + 1;
        int epoch = position == null ? 0 : position.epoch();
        Batch batch = new Batch(
                group,
                topics.events(),
                partition,
                from,
                newPosition,
                events,
                dead,
                versions,
                actions,
                outbox,
                epoch,
                problems,
                checkpointsDue,
                nodeLabels);
        return new Plan(
                batch, now, next, counted, assembled, digestsSeen, resyncsAsked, outcomes, released, in.warnings());
    }

    /** Takes in a committed batch: the new heads and position, its checkpoints, and what it tells logs, metrics and listeners. */
    private void adopt(Plan plan, Map<String, Long> checkpointAt) {
        Instant now = plan.now();
        Map<String, ClusterHead> next = plan.next();
        Map<String, ClusterHead> before = new HashMap<>(heads);
        heads.putAll(next);
        sinceCheckpoint.putAll(plan.counted());
        assembly = plan.assembled();
        plan.warnings().forEach(log::warn);
        for (String cluster : new TreeSet<>(plan.released())) {
            held.remove(cluster);
            log.info(
                    "cluster {}: its watcher's state digest agrees with the folded state again; versions resume",
                    cluster);
        }
        checkpointAt.forEach((cluster, lastEventId) -> writeCheckpoint(next.get(cluster), lastEventId, now));
        for (Map.Entry<String, ClusterHead> e : new TreeMap<>(next).entrySet()) {
            ClusterHead was = before.get(e.getKey());
            ClusterHead head = e.getValue();
            report(e.getKey(), head.admissionProblems());
            if (was == null || !was.problems().equals(head.problems())) {
                observer.refusedObjects(e.getKey(), head.problems().refusedObjects());
            }
        }
        List<Batch.DeadLetterRow> dead = plan.batch().deadLetters();
        if (!dead.isEmpty()) {
            // One line per batch, not per record: a flood of garbage on the topic must not flood the log.
            Batch.DeadLetterRow first = dead.get(0);
            log.warn(
                    "events partition {} ({}): {} record(s) refused as dead letters; the first, offset {} (key {}): {}",
                    partition,
                    topics.events(),
                    dead.size(),
                    first.offset(),
                    first.key() == null ? "none" : Printable.escape(first.key()),
                    Printable.escape(first.reason()));
            observer.deadLettered(dead.size());
        }
        advanceTo(plan.batch().newPosition());
        for (Disagreement d : plan.digestsSeen()) {
            observer.digestChecked(d.cluster(), d.check().agrees());
        }
        for (Disagreement d : plan.resyncsAsked()) {
            resyncAsked.put(d.cluster(), now);
            log.warn(
                    "cluster {}: the watcher's state digest disagrees with what was folded ({}); asked it for a resync",
                    d.cluster(),
                    String.join("; ", d.check().differences()));
            observer.resyncRequested(d.cluster());
        }
        for (Batch.VersionRow v : plan.batch().versions()) {
            log.atInfo()
                    .addKeyValue("cluster", v.cluster())
                    .addKeyValue("version", v.seq())
                    .addKeyValue("fragments", v.diff().fragments().size())
                    .addKeyValue("nodes", v.diff().nodes().size())
                    .log("version stored");
            listener.stored(v.cluster(), v.seq(), v.diff(), v.cause());
        }
        for (Carried c : plan.outcomes()) {
            OperatorAction a = c.outcome().action();
            log.atInfo()
                    .addKeyValue("cluster", c.cluster())
                    .addKeyValue("version", c.version())
                    .addKeyValue("action", a.actionId())
                    .addKeyValue("actor", a.actor())
                    .log(describe(a)
                            + (c.outcome().accepted()
                                    ? ": done"
                                    : ": refused, " + c.outcome().refusal()));
        }
    }

    /**
     * Gives up on one record that the compiler cannot process ({@link PoisonGuard}): it is stored as a dead letter with
     * {@code reason} and published to the dead-letter topic, and the position moves past it, in one transaction. The
     * record must be the next one to read. Returns false when another instance moved on (state rebuilt; seek to
     * {@link #position()}).
     *
     * @throws Fenced another compiler holds the partition now
     */
    public boolean quarantine(Record r, String reason) {
        if (r.offset() < position()) {
            throw new IllegalArgumentException("offset " + r.offset() + " is before the position " + position());
        }
        List<Batch.DeadLetterRow> dead = new ArrayList<>();
        List<Batch.OutboxRow> outbox = new ArrayList<>();
        rows.deadLetter(r, reason, dead, outbox);
        try {
            store.writes()
                    .commit(new Batch(
                            group,
                            topics.events(),
                            partition,
                            position(),
                            r.offset() + 1,
                            List.of(),
                            dead,
                            List.of(),
                            List.of(),
                            outbox,
                            position == null ? 0 : position.epoch(),
                            List.of()));
        } catch (WriterFencedException fenced) {
            throw new Fenced(fenced);
        } catch (StaleWriteException stale) {
            rebuild();
            return false;
        }
        advanceTo(r.offset() + 1);
        observer.deadLettered(1);
        return true;
    }

    /** After a commit: the stored position is now {@code next} (on the same log; the first one stored, if none was). */
    private void advanceTo(long next) {
        position = position == null ? new LogPosition(next, 0, null, 0, next) : position.advancedTo(next);
    }

    /** A digest checked in a batch, of {@code cluster}. */
    private record Disagreement(String cluster, ClusterHead.DigestCheck check) {}

    private boolean resyncDue(String cluster, Instant now) {
        Instant last = resyncAsked.get(cluster);
        return last == null || !now.isBefore(last.plus(resyncCooldown));
    }

    /** An operator action's outcome, logged once its batch committed; {@code version}: the one it made or left. */
    private record Carried(String cluster, long version, ClusterHead.ActionOutcome outcome) {}

    /**
     * Why an operator action on the topic is not carried out, or null when it is pending. Only the api
     * records actions, and each is carried out once: a record claiming an action that was never
     * recorded, delivered again (the outbox relay publishes at least once), or that expired before it
     * arrived, is refused.
     */
    private String actionRefusal(OperatorAction a, Set<Long> seenInBatch) {
        String which = "operator action " + a.actionId() + " of cluster " + a.cluster();
        if (!seenInBatch.add(a.actionId())) {
            return which + " was delivered twice in one batch; it is carried out once";
        }
        Optional<String> status = store.writes().actionStatus(a.actionId(), a.cluster());
        if (status.equals(Optional.of("pending"))) {
            return null;
        }
        return which + " is "
                + status.map(st -> st + " in operator_action, not pending"
                                + ("expired".equals(st)
                                        ? " (it waited too long; it was not carried out)"
                                        : " (already carried out)"))
                        .orElse("not in operator_action (the api never recorded it)");
    }

    private static String describe(OperatorAction a) {
        return a instanceof RollbackRequested r ? "rollback to " + r.toVersion() : "resume";
    }
}
