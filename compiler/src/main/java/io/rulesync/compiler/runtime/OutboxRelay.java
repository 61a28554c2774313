package io.rulesync.compiler.runtime;

import io.rulesync.process.Retries;
import io.rulesync.store.Notifications;
import io.rulesync.store.Outbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes outbox rows (deltas, dead letters, operator actions) to Kafka and deletes them once acknowledged. The
 * rows were written in the same transaction as what they announce, so nothing is announced that was not stored, and
 * nothing stored goes unannounced.
 *
 * <p>It reads the outbox when PostgreSQL says rows were inserted ({@link Notifications#OUTBOX}, from a trigger, so
 * rows the api inserts wake it as those of this process do), and every {@link #FALLBACK} in case a notification was
 * lost. Polling every 50 ms instead cost a core a few percent while nothing happened.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
    private static final int BATCH = 500;
    /** How often the outbox is read with no notification: a notification is lost while the listening connection is. */
    public static final Duration FALLBACK = Duration.ofSeconds(5);
    /** How long one wait for a notification lasts: how soon {@link #close} is seen (the wait is a socket read). */
    private static final Duration SLICE = Duration.ofMillis(250);

    private final Outbox outbox;
    private final Notifications inserted;
    private final Duration fallback;
    private final KafkaProducer<String, String> producer;
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param inserted notifications on {@link Notifications#OUTBOX}; closed with this relay
     * @param fallback how often the outbox is read without one ({@link #FALLBACK})
     */
    public OutboxRelay(Outbox outbox, Notifications inserted, Duration fallback, Properties producerProperties) {
        this.outbox = outbox;
        this.inserted = inserted;
        this.fallback = fallback;
        Properties p = new Properties();
        p.putAll(producerProperties);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.putIfAbsent(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(8 * 1024 * 1024));
        this.producer = new KafkaProducer<>(p);
        this.thread = new Thread(this::run, "rulesync-outbox-relay");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        // 200 ms doubling to 5 s, each ±50 %: compilers that lost the broker together retry apart.
        Retries pauses = Retries.doubling(Duration.ofMillis(200), Duration.ofSeconds(5));
        try {
            // Before the first read: a row committed between that read and the first wait still wakes it.
            inserted.listen();
        } catch (java.sql.SQLException e) {
            log.warn("listening for outbox rows: {}; reading it every {} until that works", e.getMessage(), fallback);
        }
        while (running) {
            try {
                int sent = outbox.relay(BATCH, this::publish);
                pauses.succeeded();
                if (sent < BATCH) {
                    awaitInserted();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                long backoff = pauses.failed().toMillis();
                log.warn(
                        "outbox relay failed, retrying in {} ms: {}{}",
                        backoff,
                        e.getMessage(),
                        e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")");
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void awaitInserted() throws InterruptedException {
        long until = System.nanoTime() + fallback.toNanos();
        while (running && System.nanoTime() - until < 0) {
            if (inserted.await(SLICE)) {
                return;
            }
        }
    }

    private boolean publish(List<Outbox.OutboxMessage> messages) {
        List<Future<RecordMetadata>> acks = new ArrayList<>(messages.size());
        for (Outbox.OutboxMessage m : messages) {
            acks.add(producer.send(new ProducerRecord<>(m.topic(), m.key(), m.payload())));
        }
        try {
            for (Future<RecordMetadata> f : acks) {
                f.get(30, TimeUnit.SECONDS);
            }
            return true;
        } catch (Exception e) {
            log.warn("publishing {} outbox messages failed, they stay queued: {}", messages.size(), e.getMessage());
            return false;
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        inserted.close();
        producer.close(Duration.ofSeconds(5));
    }
}
