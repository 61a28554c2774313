package io.rulesync.compiler.runtime;

import io.rulesync.compiler.eventlog.LiveLogs;
import io.rulesync.compiler.eventlog.LogCheck;
import io.rulesync.model.topic.Topics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
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
 */
public final class EventsListener implements BatchAcknowledgingConsumerAwareMessageListener<String, String>,
        ConsumerAwareRebalanceListener, ConsumerSeekAware {
    private static final Logger log = LoggerFactory.getLogger(EventsListener.class);

    private final CompilerStores store;
    private final Topics topics;
    private final String group;
    private final Clock clock;
    private final PartitionProcessor.VersionListener versions;
    private final Runnable committed;
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

    /** {@code versions} is told about each stored version after {@code metrics} is. */
    public EventsListener(CompilerStores store, Topics topics, String group, Clock clock,
            PartitionProcessor.VersionListener versions, Runnable committed, CompilerMetrics metrics, LiveLogs logs,
            Duration resyncCooldown) {
        this(store, topics, group, clock, versions, committed, metrics, logs, resyncCooldown,
                PartitionProcessor.DEFAULT_CHECKPOINT_EVERY);
    }

    public EventsListener(CompilerStores store, Topics topics, String group, Clock clock,
            PartitionProcessor.VersionListener versions, Runnable committed, CompilerMetrics metrics, LiveLogs logs,
            Duration resyncCooldown, int checkpointEvery) {
        this.checkpointEvery = checkpointEvery;
        this.store = store;
        this.topics = topics;
        this.group = group;
        this.clock = clock;
        this.versions = (cluster, seq, diff, cause) -> {
            metrics.stored(cluster, seq, diff);
            versions.stored(cluster, seq, diff, cause);
        };
        this.committed = committed;
        this.metrics = metrics;
        this.logs = logs;
        this.resyncCooldown = resyncCooldown;
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            PartitionProcessor p = new PartitionProcessor(store, topics, group, tp.partition(), clock,
                    PartitionProcessor.Faults.NONE, versions, metrics, resyncCooldown, checkpointEvery, checkpointWriter);
            processors.put(tp.partition(), p);
            verify(p);
            p.storeRecompiledVersions();
            seek(consumer, tp, p);
            log.info("partition {} assigned: {} clusters rebuilt, resuming at offset {}", tp.partition(),
                    p.heads().size(), Math.max(p.position(), 0));
        }
        committed.run(); // a reset queued resync requests
    }

    /** Both interfaces declare it; the work is done in {@link #onPartitionsRevokedBeforeCommit}. */
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
    }

    @Override
    public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> forget(tp.partition()));
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> forget(tp.partition()));
    }

    private void forget(int partition) {
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
        Map<Integer, List<PartitionProcessor.Record>> byPartition = new TreeMap<>();
        for (ConsumerRecord<String, String> r : records) {
            byPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>())
                    .add(new PartitionProcessor.Record(r.offset(), r.key(), r.value()));
        }
        // One look at the topic's id per batch (a metadata request): records of a topic created again under
        // the same name would otherwise pass for the old log's. Failing to look fails the batch, which is retried.
        Optional<String> topicId = logs.topicId(topics.events());
        for (Map.Entry<Integer, List<PartitionProcessor.Record>> e : byPartition.entrySet()) {
            PartitionProcessor p = processors.get(e.getKey());
            if (p == null) {
                continue; // revoked while this batch was in flight
            }
            TopicPartition tp = new TopicPartition(topics.events(), e.getKey());
            long first = e.getValue().get(0).offset();
            boolean sameLog = topicId.isPresent() && p.logPosition().map(lp -> topicId.get().equals(lp.topicId())).orElse(false);
            if (unverified.contains(e.getKey()) || !sameLog || first != p.position()) {
                long before = p.position();
                LogCheck.Verdict v = verify(p);
                if (v == null || p.position() != before || first < p.position()) {
                    // Unverified, reset, or records from before the position: read again from where the processor stands.
                    seek(consumer, tp, p);
                    continue;
                }
            }
            long t0 = System.nanoTime();
            PartitionProcessor.Outcome outcome = p.process(e.getValue());
            metrics.compiled(Duration.ofNanos(System.nanoTime() - t0));
            if (outcome == PartitionProcessor.Outcome.STALE) {
                log.warn("partition {}: another instance moved on; rebuilt, resuming at {}", e.getKey(), p.position());
                seek(consumer, tp, p);
            }
        }
        committed.run();
        if (ack != null) {
            ack.acknowledge(); // informational: positions live in PostgreSQL
        }
    }

    /** While nothing arrives, the log is still checked: a replaced topic's lost records are only noticed so. */
    @Override
    public void onIdleContainer(Map<TopicPartition, Long> assignments, ConsumerSeekCallback callback) {
        boolean reset = false;
        for (TopicPartition tp : assignments.keySet()) {
            PartitionProcessor p = processors.get(tp.partition());
            if (p == null || !tp.topic().equals(topics.events())) {
                continue;
            }
            long before = p.position();
            LogCheck.Verdict v = verify(p);
            if (v != null && p.position() != before) {
                callback.seek(tp.topic(), tp.partition(), p.position());
                reset |= v instanceof LogCheck.Verdict.Reset;
            }
        }
        if (reset) {
            committed.run();
        }
    }

    /** Checks a processor's position against the live log; null (and marked unverified) when Kafka cannot be asked. */
    private LogCheck.Verdict verify(PartitionProcessor p) {
        try {
            LogCheck.Verdict v = p.reconcile(logs.live(topics.events(), p.partition()));
            unverified.remove(p.partition());
            return v;
        } catch (RuntimeException e) {
            if (unverified.add(p.partition())) {
                log.warn("partition {}: cannot check the stored position against the live log yet ({}); will check again before "
                        + "its next batch", p.partition(), e.getMessage());
            }
            return null;
        }
    }

    private static void seek(Consumer<?, ?> consumer, TopicPartition tp, PartitionProcessor p) {
        if (p.position() < 0) {
            consumer.seekToBeginning(List.of(tp));
        } else {
            consumer.seek(tp, p.position());
        }
    }
}
