package io.rulesync.compiler.bench;

import static org.awaitility.Awaitility.await;

import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.rules.RulesDiff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The end-to-end benchmarks' clock: when each event was sent (by its offset on the events topic),
 * which version it went into and when that version was stored (the compiler tells through its
 * {@link PartitionProcessor.VersionListener}: a version's cause names its offsets).
 */
public final class EventClock implements PartitionProcessor.VersionListener {
    private final Map<Long, Long> sentAtNanos = new ConcurrentHashMap<>();
    private final Map<Long, Long> versionOfOffset = new ConcurrentHashMap<>();
    private final Map<Long, Long> storedAtNanos = new ConcurrentHashMap<>();
    private final AtomicLong lastStoredOffset = new AtomicLong(-1);
    private final AtomicLong head = new AtomicLong();

    @Override
    public void stored(String cluster, long seq, RulesDiff diff, String cause) {
        long now = System.nanoTime();
        Map<?, ?> c = (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(cause);
        long first = ((Number) c.get("firstOffset")).longValue();
        long last = ((Number) c.get("lastOffset")).longValue();
        storedAtNanos.put(seq, now);
        for (long o = first; o <= last; o++) {
            versionOfOffset.put(o, seq);
        }
        head.accumulateAndGet(seq, Math::max);
        lastStoredOffset.accumulateAndGet(last, Math::max);
    }

    /** Sends the values keyed by cluster, timing each; returns the last offset. */
    public long send(KafkaProducer<String, String> producer, String topic, String cluster, List<String> values)
            throws Exception {
        long last = -1;
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (String v : values) {
            long sent = System.nanoTime();
            acks.add(producer.send(new ProducerRecord<>(topic, cluster, v), (md, e) -> {
                if (md != null) {
                    sentAtNanos.put(md.offset(), sent);
                }
            }));
        }
        for (Future<RecordMetadata> a : acks) {
            last = Math.max(last, a.get().offset());
        }
        return last;
    }

    /**
     * Waits until the version that covers {@code offset} (or a later one) is stored. The wait is inside the measured
     * time, so it polls at once and every 5 ms; a benchmark has no deadline.
     */
    public void awaitStored(long offset) {
        await("the version covering offset " + offset)
                .forever()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> lastStoredOffset.get() >= offset);
    }

    public long sentAt(long offset) {
        return sentAtNanos.get(offset);
    }

    public long versionOf(long offset) {
        return versionOfOffset.get(offset);
    }

    /** From sending the event at {@code offset} to storing the version that covers it. */
    public long storedAfter(long offset) {
        return storedAtNanos.get(versionOf(offset)) - sentAt(offset);
    }

    /** The newest version stored so far. */
    public long head() {
        return head.get();
    }
}
