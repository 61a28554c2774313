package io.rulesync.watcher.publish;

import io.rulesync.process.Retries;
import io.rulesync.watcher.publish.EventSink.Delivery;
import io.rulesync.watcher.publish.PendingEvents.Entry;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that moves events from the {@link PendingEvents} queue to the {@link EventSink}.
 * Sources never wait for it: they only offer to the queue.
 *
 * <p>Outages. A batch with a failure puts the publisher in the <em>unavailable</em> state: the failed
 * events go back to the queue (unless superseded), and the publisher retries with a growing pause
 * (up to {@code maxBackoff}). Meanwhile the queue keeps conflating, so it holds the latest state per
 * key, never more than one event per key. The first fully delivered batch after failures ends the
 * outage and runs {@code onRecovered}, which the watcher uses to republish the current state of every
 * cluster (for a broker that lost data, or a consumer that gave up on the topic meanwhile).
 *
 * <p>Nothing here throws out of the loop: an unexpected exception is logged and retried like a failed
 * send, so a broken sink cannot stop the watcher.
 */
public final class Publisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Publisher.class);

    /** Tuning; {@link #DEFAULTS} suits production and tests alike. */
    public record Options(int batchSize, Duration minBackoff, Duration maxBackoff) {
        public Options {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be positive");
            }
            Objects.requireNonNull(minBackoff, "minBackoff");
            Objects.requireNonNull(maxBackoff, "maxBackoff");
        }
    }

    public static final Options DEFAULTS = new Options(500, Duration.ofMillis(200), Duration.ofSeconds(5));

    private final Retries pauses;
    private final PendingEvents pending;
    private final EventSink sink;
    private final Runnable onRecovered;
    private final Options options;
    private final Thread thread;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failedSends = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong recoveries = new AtomicLong();
    private volatile boolean available = true;
    private volatile boolean closing;
    private volatile long drainDeadline;

    public Publisher(PendingEvents pending, EventSink sink, Runnable onRecovered, Options options) {
        this.pending = Objects.requireNonNull(pending, "pending");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.onRecovered = Objects.requireNonNull(onRecovered, "onRecovered");
        this.options = Objects.requireNonNull(options, "options");
        this.pauses = Retries.doubling(options.minBackoff(), options.maxBackoff());
        this.thread = new Thread(this::run, "rulesync-publisher");
        thread.setDaemon(true);
    }

    public Publisher start() {
        thread.start();
        return this;
    }

    private void run() {
        while (true) {
            if (closing && (pending.isIdle() || System.nanoTime() - drainDeadline > 0)) {
                break;
            }
            List<Entry> batch;
            try {
                batch = pending.take(options.batchSize(), 100);
            } catch (InterruptedException e) {
                if (closing) {
                    break;
                }
                continue;
            }
            if (batch.isEmpty()) {
                continue;
            }
            Delivery d;
            try {
                d = sink.send(batch.stream().map(Entry::event).toList());
            } catch (RuntimeException e) {
                d = Delivery.failedFrom(0, batch.size(), e);
            }
            BitSet failed = d.failed();
            pending.settle(batch, failed);
            int delivered = batch.size() - failed.cardinality() - d.dropped().cardinality();
            published.addAndGet(delivered);
            dropped.addAndGet(d.dropped().cardinality());
            if (!failed.isEmpty()) {
                failedSends.addAndGet(failed.cardinality());
                if (available) {
                    available = false;
                    log.warn(
                            "Kafka is unavailable ({}); keeping the latest state of every key and retrying",
                            d.error() == null ? "unknown error" : oneLine(d.error()));
                }
                if (!pause()) {
                    break;
                }
            } else {
                pauses.succeeded();
                if (!available) {
                    available = true;
                    recoveries.incrementAndGet();
                    log.info("Kafka is available again; republishing the current state of every cluster");
                    try {
                        onRecovered.run();
                    } catch (RuntimeException e) {
                        log.error("republishing after the outage failed", e);
                    }
                }
            }
        }
        if (!pending.isIdle()) {
            log.warn("stopping with {} events unpublished", pending.unpublished());
        }
    }

    /**
     * Sleeps before the next try, from {@code minBackoff} doubling up to {@code maxBackoff}, each pause
     * drawn ±50 % so that watchers that lost the broker together do not come back together; false when
     * interrupted by a close whose drain time is over.
     */
    private boolean pause() {
        long millis = pauses.failed().toMillis();
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            return !closing || System.nanoTime() - drainDeadline <= 0;
        }
    }

    private static String oneLine(Exception e) {
        String m = e.getMessage() == null
                ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + ": " + e.getMessage();
        return m.replaceAll("\\s+", " ").strip();
    }

    /** Events delivered so far. */
    public long published() {
        return published.get();
    }

    /** Sends that failed and were retried (one per event per try). */
    public long failedSends() {
        return failedSends.get();
    }

    /** Events that could never be delivered (see {@link Delivery#dropped()}). */
    public long dropped() {
        return dropped.get();
    }

    /** Outages that ended (each followed by a republish). */
    public long recoveries() {
        return recoveries.get();
    }

    /** False between a failed send and the next fully delivered batch. */
    public boolean available() {
        return available;
    }

    /** Publishes what is still queued for up to {@code drainTimeout}, then closes the sink. */
    public void close(Duration drainTimeout) {
        drainDeadline = System.nanoTime() + drainTimeout.toNanos();
        closing = true;
        try {
            thread.join(drainTimeout.toMillis() + 1000);
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(10_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            sink.close();
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }
}
