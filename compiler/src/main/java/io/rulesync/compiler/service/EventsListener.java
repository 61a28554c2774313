package io.rulesync.compiler.service;

import io.rulesync.model.topic.Topics;
import io.rulesync.compiler.store.VersionStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.listener.BatchAcknowledgingConsumerAwareMessageListener;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.support.Acknowledgment;

/**
 * The Kafka side of the compiler: owns a {@link PartitionProcessor} per assigned partition. On
 * assignment the processor rebuilds its clusters from PostgreSQL and the consumer seeks to the
 * position stored there (the database, not Kafka's committed offsets, is the source of truth); each
 * polled batch goes to the processors of its partitions.
 */
public final class EventsListener implements BatchAcknowledgingConsumerAwareMessageListener<String, String>,
        ConsumerAwareRebalanceListener {
    private static final Logger log = LoggerFactory.getLogger(EventsListener.class);

    private final VersionStore store;
    private final Topics topics;
    private final String group;
    private final Clock clock;
    private final PartitionProcessor.VersionListener versions;
    private final Runnable committed;
    private final CompilerMetrics metrics;
    private final Map<Integer, PartitionProcessor> processors = new ConcurrentHashMap<>();

    /** {@code versions} is told about each stored version after {@code metrics} is. */
    public EventsListener(VersionStore store, Topics topics, String group, Clock clock,
            PartitionProcessor.VersionListener versions, Runnable committed, CompilerMetrics metrics) {
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
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            PartitionProcessor p = new PartitionProcessor(store, topics, group, tp.partition(), clock,
                    PartitionProcessor.Faults.NONE, versions);
            processors.put(tp.partition(), p);
            seek(consumer, tp, p);
            log.info("partition {} assigned: {} clusters rebuilt, resuming at offset {}", tp.partition(),
                    p.heads().size(), Math.max(p.position(), 0));
        }
    }

    @Override
    public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> processors.remove(tp.partition()));
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> processors.remove(tp.partition()));
    }

    @Override
    public void onMessage(List<ConsumerRecord<String, String>> records, Acknowledgment ack, Consumer<?, ?> consumer) {
        metrics.consumed(records.size());
        Map<Integer, List<PartitionProcessor.Record>> byPartition = new TreeMap<>();
        for (ConsumerRecord<String, String> r : records) {
            byPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>())
                    .add(new PartitionProcessor.Record(r.offset(), r.key(), r.value()));
        }
        for (Map.Entry<Integer, List<PartitionProcessor.Record>> e : byPartition.entrySet()) {
            PartitionProcessor p = processors.get(e.getKey());
            if (p == null) {
                continue; // revoked while this batch was in flight
            }
            long t0 = System.nanoTime();
            PartitionProcessor.Outcome outcome = p.process(e.getValue());
            metrics.compiled(Duration.ofNanos(System.nanoTime() - t0));
            if (outcome == PartitionProcessor.Outcome.STALE) {
                log.warn("partition {}: another instance moved on; rebuilt, resuming at {}", e.getKey(), p.position());
                seek(consumer, new TopicPartition(topics.events(), e.getKey()), p);
            }
        }
        committed.run();
        if (ack != null) {
            ack.acknowledge(); // informational: positions live in PostgreSQL
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
