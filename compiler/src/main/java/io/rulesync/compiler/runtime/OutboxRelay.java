package io.rulesync.compiler.runtime;

import io.rulesync.store.Outbox;
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
 * Publishes outbox rows (deltas, dead letters) to Kafka and deletes them once acknowledged. The
 * rows were written in the same transaction as the versions they announce, so nothing is announced
 * that was not stored, and nothing stored goes unannounced.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
    private static final int BATCH = 500;

    private final Outbox outbox;
    private final KafkaProducer<String, String> producer;
    private final Object wakeup = new Object();
    private final Thread thread;
    private volatile boolean running = true;

    public OutboxRelay(Outbox outbox, Properties producerProperties) {
        this.outbox = outbox;
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

    /** Something was committed: publish it now rather than at the next poll. */
    public void wake() {
        synchronized (wakeup) {
            wakeup.notifyAll();
        }
    }

    private void run() {
        long backoff = 0;
        while (running) {
            try {
                int sent = outbox.relay(BATCH, this::publish);
                backoff = 0;
                if (sent < BATCH) {
                    synchronized (wakeup) {
                        wakeup.wait(50);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                backoff = Math.min(Math.max(backoff * 2, 200), 5_000);
                log.warn("outbox relay failed, retrying in {} ms: {}{}", backoff, e.getMessage(),
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
        producer.close(java.time.Duration.ofSeconds(5));
    }
}
