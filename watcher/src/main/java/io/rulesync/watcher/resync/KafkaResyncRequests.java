package io.rulesync.watcher.resync;

import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.text.Printable;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads resync requests from the resync topic: every partition assigned (no consumer group: each
 * watcher hears every request and acts on its own clusters'), from the end at start, since a
 * starting watcher publishes every cluster's whole state anyway. A topic that does not exist yet
 * (the compiler creates it) is looked for again every few seconds; so is a change in its partitions.
 */
public final class KafkaResyncRequests implements ResyncSource {
    private static final Logger log = LoggerFactory.getLogger(KafkaResyncRequests.class);
    private static final Duration RECHECK = Duration.ofSeconds(5);

    private final Properties config;
    private final String topic;

    /** {@code clientConfig}: bootstrap servers and security settings; the rest is set here. */
    public KafkaResyncRequests(Properties clientConfig, String topic) {
        this.config = new Properties();
        clientConfig.forEach((k, v) -> {
            if (ConsumerConfig.configNames().contains(String.valueOf(k))) {
                config.put(k, v);
            }
        });
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        config.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "rulesync-watcher-resync");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.topic = Objects.requireNonNull(topic, "topic");
    }

    @Override
    public Listening start(Consumer<ResyncRequest> handler) {
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
        AtomicBoolean ready = new AtomicBoolean();
        Thread t = new Thread(() -> run(consumer, handler, ready), "rulesync-resync-requests");
        t.setDaemon(true);
        t.start();
        return new Listening() {
            @Override
            public boolean ready() {
                return ready.get();
            }

            @Override
            public void close() {
                consumer.wakeup();
                try {
                    t.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }

    private void run(KafkaConsumer<String, String> consumer, Consumer<ResyncRequest> handler, AtomicBoolean ready) {
        try (consumer) {
            int assigned = 0;
            long nextCheck = 0;
            while (true) {
                if (System.nanoTime() - nextCheck >= 0) {
                    nextCheck = System.nanoTime() + RECHECK.toNanos();
                    assigned = assign(consumer, assigned);
                    ready.set(assigned > 0);
                }
                if (assigned == 0) {
                    Thread.sleep(200);
                    continue;
                }
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : records) {
                    try {
                        handler.accept(ResyncRequest.decode(r.value()));
                    } catch (IllegalArgumentException e) {
                        log.warn(
                                "{}/{} offset {}: ignoring a record that is not a resync request: {}",
                                topic,
                                r.partition(),
                                r.offset(),
                                Printable.escape(e.getMessage()));
                    }
                }
            }
        } catch (WakeupException | InterruptedException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("reading resync requests from {} stopped: {}", topic, e.toString());
        }
    }

    /** Assigns every partition of the topic when their number changed; returns how many are assigned. */
    private int assign(KafkaConsumer<String, String> consumer, int assigned) {
        List<PartitionInfo> infos;
        try {
            infos = consumer.partitionsFor(topic, RECHECK);
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            return assigned;
        }
        int n = infos == null ? 0 : infos.size();
        if (n != assigned && n > 0) {
            List<TopicPartition> parts = infos.stream()
                    .map(i -> new TopicPartition(topic, i.partition()))
                    .toList();
            consumer.assign(parts);
            if (assigned == 0) {
                consumer.seekToEnd(parts);
                parts.forEach(consumer::position); // resolves the seek now: every request from here on is heard
                log.info("listening for resync requests on {}", topic);
            }
        }
        return n;
    }
}
