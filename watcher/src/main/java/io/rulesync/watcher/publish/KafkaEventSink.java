package io.rulesync.watcher.publish;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes events to one Kafka topic: key = cluster id (so one cluster's events stay in one
 * partition, in order), value = {@link EventCodec#encode} (UTF-8 JSON).
 *
 * <p>The producer is idempotent with {@code acks=all}. After a failed batch the producer is closed
 * and the next batch gets a new one from the factory: a producer that timed out during an outage
 * starts over cleanly, and tests can point the factory at a broker that appears later.
 */
public final class KafkaEventSink implements EventSink {
    private static final Logger log = LoggerFactory.getLogger(KafkaEventSink.class);

    private final Supplier<Producer<String, String>> factory;
    private final String topic;
    private Producer<String, String> producer;

    public KafkaEventSink(Supplier<Producer<String, String>> factory, String topic) {
        this.factory = Objects.requireNonNull(factory, "factory");
        this.topic = Objects.requireNonNull(topic, "topic");
    }

    /** A sink whose producers use {@code config} on top of {@link #producerDefaults()}. */
    public static KafkaEventSink create(Properties config, String topic) {
        Object servers = config.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (!(servers instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG + " is required");
        }
        Properties merged = producerConfig(config);
        return new KafkaEventSink(() -> new KafkaProducer<>(merged), topic);
    }

    /**
     * What the watcher needs from its producer. {@code acks=all} and idempotence are forced (see
     * {@link #producerConfig}); the timeouts are chosen so that an outage shows within seconds rather
     * than Kafka's default two minutes, while retries inside a timeout stay Kafka's business.
     */
    public static Properties producerDefaults() {
        Properties p = new Properties();
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "rulesync-watcher");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "2000");
        return p;
    }

    /** {@code overrides} on top of the defaults, with idempotence, {@code acks=all} and serializers forced. */
    public static Properties producerConfig(Properties overrides) {
        Properties p = producerDefaults();
        p.putAll(overrides);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    public String topic() {
        return topic;
    }

    @Override
    public Delivery send(List<ClusterEvent> events) {
        if (events.isEmpty()) {
            return Delivery.ok();
        }
        if (producer == null) {
            try {
                producer = factory.get();
            } catch (RuntimeException e) {
                return Delivery.failedFrom(0, events.size(), e);
            }
        }
        List<Future<RecordMetadata>> futures = new ArrayList<>(events.size());
        Exception error = null;
        BitSet failed = new BitSet();
        BitSet dropped = new BitSet();
        for (int i = 0; i < events.size(); i++) {
            ClusterEvent e = events.get(i);
            try {
                Future<RecordMetadata> f = producer.send(new ProducerRecord<>(topic, e.cluster(), EventCodec.encode(e)));
                futures.add(f);
                if (f.isDone() && failure(f) != null) {
                    // Typically the metadata wait (max.block.ms) timed out: Kafka is not there, and
                    // every further send would wait just as long. Give up on the rest of the batch.
                    failed.set(i + 1, events.size());
                    break;
                }
            } catch (RuntimeException ex) {
                error = ex;
                failed.set(i, events.size());
                break;
            }
        }
        for (int i = 0; i < futures.size(); i++) {
            Exception ex = failure(futures.get(i));
            if (ex == null) {
                continue;
            }
            if (ex instanceof RecordTooLargeException) {
                log.error("dropping {} for cluster {}: {}", describe(events.get(i)), events.get(i).cluster(), ex.getMessage());
                dropped.set(i);
            } else {
                failed.set(i);
            }
            error = error == null ? ex : error;
        }
        if (!failed.isEmpty()) {
            closeProducer(Duration.ZERO);
        }
        return new Delivery(failed, dropped, error);
    }

    private static Exception failure(Future<RecordMetadata> f) {
        try {
            f.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause() instanceof Exception c ? c : e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e;
        }
    }

    private static String describe(ClusterEvent e) {
        return e.getClass().getSimpleName();
    }

    private void closeProducer(Duration timeout) {
        if (producer != null) {
            try {
                producer.close(timeout);
            } catch (RuntimeException e) {
                log.debug("closing the Kafka producer failed", e);
            }
            producer = null;
        }
    }

    @Override
    public void close() {
        if (producer != null) {
            try {
                producer.flush();
            } catch (RuntimeException e) {
                log.debug("flushing the Kafka producer failed", e);
            }
        }
        closeProducer(Duration.ofSeconds(5));
    }
}
