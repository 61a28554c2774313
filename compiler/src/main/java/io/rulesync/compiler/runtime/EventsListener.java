package io.rulesync.compiler.runtime;

import io.rulesync.compiler.eventlog.LiveLogs;
import io.rulesync.compiler.eventlog.LogCheck;
import io.rulesync.model.text.Printable;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.PartitionWriters;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.listener.BatchAcknowledgingConsumerAwareMessageListener;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.ConsumerSeekAware;
import org.springframework.kafka.support.Acknowledgment;

/**
 * The Kafka side of the compiler: owns a {@link PartitionProcessor} per assigned partition. On
 * assignment the processor rebuilds its clusters from PostgreSQL and the consumer seeks to the
 * position stored there (the database, not Kafka's committed offsets, is the source of truth); each
 * polled batch goes to the processors of its partitions.
 *
 * <p>A stored position is trusted only on the log it was taken from, so the live log is checked
 * ({@link PartitionProcessor#reconcile}) on assignment, whenever the container is idle, and before a
 * batch whose topic id is not the stored one or whose first offset is not the stored position (Kafka
 * resets a consumer whose position fell off the log without a word, and reads a recreated topic on
 * from the old offset when it is long enough). A check that cannot reach Kafka leaves the partition
 * unverified, and its next batch is checked again.
 *
 * <p>One compiler writes a partition at a time ({@link PartitionWriters}): a partition Kafka assigns is claimed
 * first, and every write of its processor is fenced by the claim. A partition another consumer group's compiler
 * writes is not processed: this compiler says so in one ERROR line, counts it
 * ({@code rulesync.compiler.partitions.standing.by}) and stands by, taking the partition once that writer has been
 * silent for the lease. A processor whose claim was taken (this compiler froze, and Kafka gave the partition to
 * another member) stops at its next write, says so, and is dropped; it does not rebuild and fight the new writer.
 */
public final class EventsListener
        implements BatchAcknowledgingConsumerAwareMessageListener<String, String>,
                ConsumerAwareRebalanceListener,
                ConsumerSeekAware,
                AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventsListener.class);

    private final CompilerStores store;
    private final Topics topics;
    private final String group;
    private final Clock clock;
    private final PartitionProcessor.VersionListener versions;
    private final CompilerMetrics metrics;
    private final LiveLogs logs;
    private final Duration resyncCooldown;
    private final int checkpointEvery;
    /** Writes checkpoints after their batch, so that no batch waits for one; one thread, so a cluster's come in order. */
    private final Executor checkpointWriter = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rulesync-checkpoints");
        t.setDaemon(true);
        return t;
    });

    private final Map<Integer, PartitionProcessor> processors = new ConcurrentHashMap<>();
    /** Partitions whose position could not be checked against the live log yet. */
    private final Set<Integer> unverified = ConcurrentHashMap.newKeySet();
    /** This process, as {@code partition_writer} names it. */
    private final String writer;

    private final Duration lease;
    /** The claims this compiler holds, by partition: their epochs. */
    private final Map<Integer, Long> claims = new ConcurrentHashMap<>();
    /** Partitions assigned to this compiler that it does not process, and why. */
    private final Map<Integer, Waiting> waiting = new ConcurrentHashMap<>();

    private final ScheduledExecutorService renewals;
    private final PartitionProcessor.Faults faults;
    private final PoisonGuard poison = new PoisonGuard();
    private volatile boolean renewalFailing;

    /**
     * An assigned partition this compiler does not process: another compiler writes it ({@code holder}; taken again only
     * once that one is silent for the lease), or starting it failed (null; tried again, as assigned).
     */
    private record Waiting(PartitionWriters.Holder holder, long retryAfterNanos) {}

    /** The partition waits, and is tried again after a third of the lease. */
    private void waitFor(int partition, PartitionWriters.Holder holder) {
        waiting.put(partition, new Waiting(holder, System.nanoTime() + lease.toNanos() / 3));
    }

    /** {@code versions} is told about each stored version after {@code metrics} is. */
    public EventsListener(
            CompilerStores store,
            Topics topics,
            String group,
            Clock clock,
            PartitionProcessor.VersionListener versions,
            CompilerMetrics metrics,
            LiveLogs logs,
            Duration resyncCooldown) {
        this(
                store,
                topics,
                group,
                clock,
                versions,
                metrics,
                logs,
                resyncCooldown,
                PartitionProcessor.DEFAULT_CHECKPOINT_EVERY,
                CompilerProperties.DEFAULT_WRITER_LEASE,
                PartitionProcessor.Faults.NONE);
    }

    /**
     * @param lease  how long another group's compiler must be silent before this one takes its partitions
     * @param faults what tests inject into the processors ({@link PartitionProcessor.Faults#NONE} deployed)
     */
    public EventsListener(
            CompilerStores store,
            Topics topics,
            String group,
            Clock clock,
            PartitionProcessor.VersionListener versions,
            CompilerMetrics metrics,
            LiveLogs logs,
            Duration resyncCooldown,
            int checkpointEvery,
            Duration lease,
            PartitionProcessor.Faults faults) {
        this.faults = faults;
        this.writer = writerName();
        this.lease = lease;
        this.checkpointEvery = checkpointEvery;
        this.store = store;
        this.topics = topics;
        this.group = group;
        this.clock = clock;
        this.versions = (cluster, seq, diff, cause) -> {
            metrics.stored(cluster, seq, diff);
            versions.stored(cluster, seq, diff, cause);
        };
        this.metrics = metrics;
        this.logs = logs;
        this.resyncCooldown = resyncCooldown;
        // A third of the lease: two renewals may fail (a database hiccup) before another group's compiler takes over.
        long every = Math.max(1, lease.toMillis() / 3);
        this.renewals = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rulesync-writer-claims");
            t.setDaemon(true);
            return t;
        });
        renewals.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
    }

    private static String writerName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid() + "/"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    /** This compiler's name in {@code partition_writer}. */
    public String writer() {
        return writer;
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        // One line per compiler that holds some of them, not one per partition.
        Map<String, List<Integer>> refused = new LinkedHashMap<>();
        Map<String, PartitionWriters.Holder> holders = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            PartitionWriters.Holder h = take(tp.partition(), true, position -> seek(consumer, tp, position));
            if (h != null) {
                refused.computeIfAbsent(h.writer(), k -> new ArrayList<>()).add(tp.partition());
                holders.putIfAbsent(h.writer(), h);
            }
        }
        refused.forEach((w, list) -> log.error(
                "events partition(s) {} of {}: written by {}; this compiler ({}, consumer group '{}') "
                        + "does not write them. Two compiler deployments share this database: stop one, or give both the same --group. "
                        + "Standing by: it takes a partition whose writer has been silent for {}",
                list,
                topics.events(),
                holders.get(w),
                writer,
                group,
                lease));
        metrics.standingBy(standingBy());
    }

    /**
     * Claims a partition and starts its processor, seeking with {@code seek}; {@code assigned}: Kafka just gave it to this
     * compiler (see {@link PartitionWriters#claim}). Returns who holds it instead, if another compiler does (the partition
     * then waits); null when started, or when starting failed (it waits too, and is tried again).
     */
    private PartitionWriters.Holder take(int partition, boolean assigned, java.util.function.LongConsumer seek) {
        PartitionWriters.Outcome o;
        try {
            o = store.writers().claim(topics.events(), partition, group, writer, lease, assigned);
        } catch (RuntimeException e) {
            log.warn("events partition {}: cannot claim it yet ({}); will try again", partition, e.getMessage());
            waitFor(partition, null);
            return null;
        }
        if (o instanceof PartitionWriters.Outcome.Refused r) {
            waitFor(partition, r.holder());
            return r.holder();
        }
        PartitionWriters.Outcome.Granted g = (PartitionWriters.Outcome.Granted) o;
        if (g.previous() != null && !g.previous().group().equals(group)) {
            log.warn(
                    "events partition {}: took it over from {}, silent for longer than the writer lease ({}); resuming where it "
                            + "stopped",
                    partition,
                    g.previous(),
                    lease);
        }
        waiting.remove(partition);
        claims.put(partition, g.claim().epoch());
        PartitionProcessor p;
        try {
            p = new PartitionProcessor(
                    store.fencedBy(g.claim()).partition(),
                    topics,
                    group,
                    partition,
                    clock,
                    faults,
                    versions,
                    metrics,
                    resyncCooldown,
                    checkpointEvery,
                    checkpointWriter);
            processors.put(partition, p);
            verify(p);
            p.storeRecompiledVersions();
        } catch (PartitionProcessor.Fenced f) {
            standDown(partition, f);
            return f.holder();
        } catch (RuntimeException e) {
            processors.remove(partition);
            log.warn("events partition {}: cannot rebuild it yet ({}); will try again", partition, e.getMessage());
            waitFor(partition, null);
            return null;
        }
        seek.accept(p.position());
        log.info(
                "partition {} assigned: {} clusters rebuilt, resuming at offset {}",
                partition,
                p.heads().size(),
                Math.max(p.position(), 0));
        return null;
    }

    /** Another compiler took {@code partition}: this one drops its processor and writes it no more. */
    private void standDown(int partition, PartitionProcessor.Fenced f) {
        forget(partition);
        waitFor(partition, f.holder());
        metrics.writerFenced();
        metrics.standingBy(standingBy());
        log.error(
                "events partition {}: another compiler took it while this one ({}) was not heard from: {}. This compiler "
                        + "stops writing it, and takes it again only if that writer falls silent for {}",
                partition,
                writer,
                f.getMessage(),
                lease);
    }

    /** Tries again the waiting partitions of {@code assigned} whose time has come; {@code seek} seeks one of them. */
    private void retryWaiting(
            Collection<TopicPartition> assigned, java.util.function.BiConsumer<TopicPartition, Long> seek) {
        if (waiting.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (TopicPartition tp : assigned) {
            Waiting w = waiting.get(tp.partition());
            if (w == null || !tp.topic().equals(topics.events()) || now - w.retryAfterNanos() < 0) {
                continue;
            }
            take(tp.partition(), w.holder() == null, position -> seek.accept(tp, position));
        }
        metrics.standingBy(standingBy());
    }

    private int standingBy() {
        return (int) waiting.values().stream().filter(w -> w.holder() != null).count();
    }

    /** Keeps this compiler's claims alive while it is idle (commits do it too); a claim taken meanwhile is found at the next write. */
    private void renew() {
        try {
            Map<Integer, PartitionWriters.Holder> lost =
                    store.writers().renew(topics.events(), writer, Map.copyOf(claims));
            lost.forEach((partition, h) -> log.warn(
                    "events partition {}: {} holds it now; this compiler stops at its next write", partition, h));
            if (renewalFailing) {
                log.info("partition claims renewed again");
                renewalFailing = false;
            }
        } catch (RuntimeException e) {
            if (!renewalFailing) {
                log.warn(
                        "cannot renew this compiler's partition claims ({}); another group's compiler takes them after {} of this",
                        e.getMessage(),
                        lease);
                renewalFailing = true;
            }
        }
    }

    /**
     * Stops renewing, and lets go of this compiler's claims so that a compiler standing by takes them at once rather than
     * after the lease (Kafka's own group moves them on its own).
     */
    @Override
    public void close() {
        renewals.shutdownNow();
        try {
            store.writers().release(topics.events(), writer);
        } catch (RuntimeException e) {
            log.warn(
                    "cannot release this compiler's partition claims ({}); they lapse after {}", e.getMessage(), lease);
        }
    }

    /** Both interfaces declare it; the work is done in {@link #onPartitionsRevokedBeforeCommit}. */
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

    @Override
    public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> forget(tp.partition()));
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> forget(tp.partition()));
    }

    private void forget(int partition) {
        claims.remove(partition);
        if (waiting.remove(partition) != null) {
            metrics.standingBy(standingBy());
        }
        PartitionProcessor p = processors.remove(partition);
        if (p != null) {
            metrics.forget(p.heads().keySet());
        }
        unverified.remove(partition);
        if (p != null) {
            // Its clusters' problems are now the new owner's to count.
            p.heads().keySet().forEach(cluster -> metrics.admissionProblemsChanged(cluster, List.of()));
        }
    }

    @Override
    public void onMessage(List<ConsumerRecord<String, String>> records, Acknowledgment ack, Consumer<?, ?> consumer) {
        metrics.consumed(records.size());
        retryWaiting(consumer.assignment(), (tp, position) -> seek(consumer, tp, position));
        Map<Integer, List<PartitionProcessor.Record>> byPartition = new TreeMap<>();
        for (ConsumerRecord<String, String> r : records) {
            byPartition
                    .computeIfAbsent(r.partition(), k -> new ArrayList<>())
                    .add(new PartitionProcessor.Record(r.offset(), r.key(), r.value()));
        }
        // One look at the topic's id per batch (a metadata request): records of a topic created again under
        // the same name would otherwise pass for the old log's. Failing to look fails the batch, which is retried.
        Optional<String> topicId = logs.topicId(topics.events());
        for (Map.Entry<Integer, List<PartitionProcessor.Record>> e : byPartition.entrySet()) {
            PartitionProcessor p = processors.get(e.getKey());
            if (p == null) {
                continue; // revoked while this batch was in flight, or another compiler writes it
            }
            try {
                processBatch(consumer, p, e.getKey(), e.getValue(), topicId);
            } catch (PartitionProcessor.Fenced f) {
                standDown(e.getKey(), f);
            }
        }
        if (ack != null) {
            ack.acknowledge(); // informational: positions live in PostgreSQL
        }
    }

    private void processBatch(
            Consumer<?, ?> consumer,
            PartitionProcessor p,
            int partition,
            List<PartitionProcessor.Record> batch,
            Optional<String> topicId) {
        TopicPartition tp = new TopicPartition(topics.events(), partition);
        long first = batch.get(0).offset();
        boolean sameLog = topicId.isPresent()
                && p.logPosition().map(lp -> topicId.get().equals(lp.topicId())).orElse(false);
        if (unverified.contains(partition) || !sameLog || first != p.position()) {
            long before = p.position();
            LogCheck.Verdict v = verify(p);
            if (v == null || p.position() != before || first < p.position()) {
                // Unverified, reset, or records from before the position: read again from where the processor stands.
                seek(consumer, tp, p.position());
                return;
            }
        }
        long t0 = System.nanoTime();
        PartitionProcessor.Outcome outcome;
        try {
            outcome = p.process(batch);
        } catch (PartitionProcessor.Fenced f) {
            throw f;
        } catch (RuntimeException e) {
            if (!poison.takeApart(partition, first, e)) {
                throw e; // retried whole, from its first record (BatchFailures says so)
            }
            log.warn(
                    "events partition {}: the batch from offset {} failed {} times for what it holds ({}); trying its {} records one "
                            + "at a time",
                    partition,
                    first,
                    PoisonGuard.ATTEMPTS,
                    e.toString(),
                    batch.size());
            takeApart(consumer, tp, p, batch);
            return;
        }
        metrics.compiled(Duration.ofNanos(System.nanoTime() - t0));
        poison.succeeded(partition);
        if (outcome == PartitionProcessor.Outcome.STALE) {
            log.warn("partition {}: another instance moved on; rebuilt, resuming at {}", partition, p.position());
            seek(consumer, tp, p.position());
        }
    }

    /**
     * Each record of a failing batch on its own: one that fails alone, for what it holds, is quarantined as a dead letter
     * (ERROR line, {@code rulesync.events.quarantined}); the others are committed as usual. A failure that is not the
     * record's (the database) fails the batch again, and it is retried whole.
     */
    private void takeApart(
            Consumer<?, ?> consumer, TopicPartition tp, PartitionProcessor p, List<PartitionProcessor.Record> batch) {
        int partition = tp.partition();
        for (PartitionProcessor.Record r : batch) {
            if (r.offset() < p.position()) {
                continue;
            }
            List<PartitionProcessor.Record> one = List.of(r);
            RuntimeException failure;
            try {
                if (p.process(one) == PartitionProcessor.Outcome.STALE) {
                    seek(consumer, tp, p.position());
                    return;
                }
                poison.succeeded(partition);
                continue;
            } catch (PartitionProcessor.Fenced f) {
                throw f;
            } catch (RuntimeException e) {
                failure = e;
            }
            if (!PoisonGuard.recordsFault(failure)) {
                throw failure;
            }
            if (!poison.mayQuarantine(partition)) {
                log.error(
                        "events partition {}: {} records in a row failed on their own; the fault is not in the records, so none "
                                + "more is quarantined: the partition waits, retrying, until a batch succeeds ({})",
                        partition,
                        PoisonGuard.IN_A_ROW,
                        failure.toString());
                throw failure;
            }
            String reason =
                    "the compiler failed on this record (" + failure + "); quarantined so that the partition goes on";
            if (!p.quarantine(r, reason)) {
                seek(consumer, tp, p.position());
                return;
            }
            metrics.quarantined();
            String key = r.key() == null ? "none" : Printable.escape(r.key());
            log.error(
                    "events partition {}: record at offset {} (key {}) quarantined as a dead letter after it failed on its own: {}. "
                            + "The partition goes on without it; it is kept in the dead letters (GET /clusters/{}/problems)",
                    partition,
                    r.offset(),
                    key,
                    failure.toString(),
                    key);
        }
    }

    /** While nothing arrives, the log is still checked: a replaced topic's lost records are only noticed so. */
    @Override
    public void onIdleContainer(Map<TopicPartition, Long> assignments, ConsumerSeekCallback callback) {
        retryWaiting(assignments.keySet(), (tp, position) -> {
            if (position < 0) {
                callback.seekToBeginning(tp.topic(), tp.partition());
            } else {
                callback.seek(tp.topic(), tp.partition(), position);
            }
        });
        for (TopicPartition tp : assignments.keySet()) {
            PartitionProcessor p = processors.get(tp.partition());
            if (p == null || !tp.topic().equals(topics.events())) {
                continue;
            }
            long before = p.position();
            LogCheck.Verdict v;
            try {
                v = verify(p);
            } catch (PartitionProcessor.Fenced f) {
                standDown(tp.partition(), f);
                continue;
            }
            if (v != null && p.position() != before) {
                callback.seek(tp.topic(), tp.partition(), p.position());
            }
        }
    }

    /** Checks a processor's position against the live log; null (and marked unverified) when Kafka cannot be asked. */
    private LogCheck.Verdict verify(PartitionProcessor p) {
        try {
            LogCheck.Verdict v = p.reconcile(logs.live(topics.events(), p.partition()));
            unverified.remove(p.partition());
            return v;
        } catch (PartitionProcessor.Fenced f) {
            throw f;
        } catch (RuntimeException e) {
            if (unverified.add(p.partition())) {
                log.warn(
                        "partition {}: cannot check the stored position against the live log yet ({}); will check again before "
                                + "its next batch",
                        p.partition(),
                        e.getMessage());
            }
            return null;
        }
    }

    private static void seek(Consumer<?, ?> consumer, TopicPartition tp, long position) {
        if (position < 0) {
            consumer.seekToBeginning(List.of(tp));
        } else {
            consumer.seek(tp, position);
        }
    }
}
