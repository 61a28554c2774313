package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesDelta;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One cluster's deltas, read from the partition its key maps to. No consumer group: every node
 * reads the same messages, and where to start is decided by the version the node runs, not by a
 * committed offset. {@link #start} takes the current end of the partition before the agent loads
 * its snapshot, so no delta published in between is missed (those the snapshot already has are
 * recognised by version and skipped).
 */
public final class DeltaFeed implements DeltaSource {
    private static final Logger log = LoggerFactory.getLogger(DeltaFeed.class);

    private final String cluster;
    private final String topic;
    private final KafkaConsumer<String, String> consumer;
    private final Clock clock;
    private final Map<Integer, String> parts = new TreeMap<>();
    private long partsTarget = -1;

    public DeltaFeed(String bootstrap, Map<String, Object> kafkaSettings, String topic, String cluster, Clock clock) {
        this.cluster = cluster;
        this.topic = topic;
        this.clock = clock;
        Properties p = new Properties();
        p.putAll(kafkaSettings);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);
        // A first version of a large cluster arrives in many ~1 MB parts.
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** Assigns the cluster's partition at its current end; waits until the topic exists. */
    @Override
    public void start(Duration timeout) {
        Instant deadline = clock.instant().plus(timeout);
        List<PartitionInfo> infos = List.of();
        while (true) {
            try {
                infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                infos = List.of();
            }
            if (infos != null && !infos.isEmpty()) {
                break;
            }
            if (clock.instant().isAfter(deadline)) {
                throw new IllegalStateException(
                        "topic " + topic + " does not exist (waited " + timeout.toSeconds() + " s)");
            }
            log.atInfo().addKeyValue("cluster", cluster).log("waiting for topic {}", topic);
            sleep(1000);
        }
        int partition = partitionOf(cluster, infos.size());
        TopicPartition tp = new TopicPartition(topic, partition);
        consumer.assign(List.of(tp));
        consumer.seekToEnd(List.of(tp));
        long position = consumer.position(tp);
        log.atInfo()
                .addKeyValue("cluster", cluster)
                .log("reading deltas of cluster {} from {}-{} at offset {}", cluster, topic, partition, position);
    }

    /** The partition Kafka's default partitioner picks for a key (murmur2), as the compiler's producer does. */
    static int partitionOf(String key, int partitions) {
        return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
    }

    /** Whole deltas of this cluster received within {@code wait}, in order; parts are put together. A gap shows as a base the agent does not run. */
    @Override
    public Polled poll(Duration wait) {
        List<RulesDelta> out = new ArrayList<>();
        for (ConsumerRecord<String, String> r : consumer.poll(wait)) {
            if (!cluster.equals(r.key()) || r.value() == null) {
                continue;
            }
            try {
                int[] part = RulesDelta.partOf(r.value());
                if (part[1] == 1) {
                    out.add(RulesDelta.fromJson(r.value()));
                    continue;
                }
                long target = targetOf(r.value());
                if (target != partsTarget) {
                    parts.clear();
                    partsTarget = target;
                }
                parts.put(part[0], r.value());
                if (parts.size() == part[1]) {
                    out.add(RulesDelta.fromJsonParts(new ArrayList<>(parts.values())));
                    parts.clear();
                    partsTarget = -1;
                }
            } catch (RuntimeException e) {
                // A delta the agent cannot read is a gap: the next readable one asks for a snapshot.
                log.atWarn()
                        .addKeyValue("cluster", cluster)
                        .log(
                                "skipping unreadable delta at {}-{}@{}: {}",
                                r.topic(),
                                r.partition(),
                                r.offset(),
                                e.getMessage());
            }
        }
        return new Polled(out, null);
    }

    private static long targetOf(String json) {
        int i = json.indexOf("\"target\":");
        int end = i + 9;
        while (end < json.length() && Character.isDigit(json.charAt(end))) {
            end++;
        }
        return Long.parseLong(json.substring(i + 9, end));
    }

    @Override
    public void wakeup() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
