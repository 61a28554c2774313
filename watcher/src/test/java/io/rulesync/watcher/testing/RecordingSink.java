package io.rulesync.watcher.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.watcher.publish.EventSink;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/**
 * An in-memory sink behind the same interface as Kafka's. Every event goes through the wire codec
 * (encode, then decode), so what the tests see is what a consumer of the topic would see. It can be
 * made to fail (an outage) or to block (a slow broker).
 */
public final class RecordingSink implements EventSink {
    private final List<ClusterEvent> events = new ArrayList<>();
    private volatile boolean failing;
    private volatile CountDownLatch gate;
    private final AtomicInteger sends = new AtomicInteger();
    private volatile boolean closed;

    @Override
    public Delivery send(List<ClusterEvent> batch) {
        sends.incrementAndGet();
        CountDownLatch g = gate;
        if (g != null) {
            try {
                g.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Delivery.failedFrom(0, batch.size(), e);
            }
        }
        if (failing) {
            return Delivery.failedFrom(0, batch.size(), new IOException("broker down (test)"));
        }
        List<ClusterEvent> decoded = new ArrayList<>();
        for (ClusterEvent e : batch) {
            EventCodec.Decoded d = EventCodec.decode(EventCodec.encode(e));
            if (!(d instanceof EventCodec.Decoded.Valid v)) {
                throw new AssertionError("the watcher published an event consumers cannot read: " + d);
            }
            decoded.add(v.event());
        }
        synchronized (this) {
            events.addAll(decoded);
        }
        return Delivery.ok();
    }

    public void failing(boolean f) {
        failing = f;
    }

    /** Makes every send wait until {@link #open()}. */
    public void block() {
        gate = new CountDownLatch(1);
    }

    public void open() {
        CountDownLatch g = gate;
        gate = null;
        if (g != null) {
            g.countDown();
        }
    }

    public int sends() {
        return sends.get();
    }

    public synchronized List<ClusterEvent> events() {
        return List.copyOf(events);
    }

    public synchronized void clear() {
        events.clear();
    }

    public List<ClusterEvent> events(String cluster) {
        return events().stream().filter(e -> e.cluster().equals(cluster)).toList();
    }

    public void await(String what, Predicate<List<ClusterEvent>> condition) {
        Awaitility.await(what).atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<ClusterEvent> now = events();
            assertThat(condition.test(now))
                    .as(() -> "events so far:\n" + Events.describe(now))
                    .isTrue();
        });
    }

    public boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
    }
}
