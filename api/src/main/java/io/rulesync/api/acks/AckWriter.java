package io.rulesync.api.acks;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.NodeStatusStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes acks received (on node streams, or over HTTP) to {@code node_status} in batches: one thread takes whatever
 * arrives within {@code linger} of the first (up to {@code maxBatch}) and writes it in one transaction, so a thousand
 * nodes acking one version cost a few round trips, not a thousand. Each ack's future completes when its batch is committed; the request is answered then, so an ack
 * the agent was told is stored is stored.
 */
public final class AckWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AckWriter.class);

    private record Pending(List<NodeAck> acks, CompletableFuture<Void> stored) {}

    private final NodeStatusStore store;
    private final AckMetrics metrics;
    /**
     * What a batch waits for more: an ack is stored at most this much later. With 20 ms, a thousand nodes acking a version
     * go in batches of about 250 (their acks come in bursts); 50 ms (batches of 350) made no difference to PostgreSQL's CPU.
     */
    public static final Duration DEFAULT_LINGER = Duration.ofMillis(20);

    private final int maxBatch;
    private final Duration linger;
    private final BlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final DistributionSummary batches;
    private final Timer writes;
    private volatile boolean stopping;

    public AckWriter(NodeStatusStore store, AckMetrics metrics, int maxBatch, MeterRegistry meters) {
        this(store, metrics, maxBatch, DEFAULT_LINGER, meters);
    }

    /** @param linger how long a batch waits for more acks after its first (up to {@code maxBatch}) */
    public AckWriter(NodeStatusStore store, AckMetrics metrics, int maxBatch, Duration linger, MeterRegistry meters) {
        this.store = store;
        this.metrics = metrics;
        this.maxBatch = maxBatch;
        this.linger = linger;
        this.batches = DistributionSummary.builder("rulesync.acks.batch")
                .description("acks written per transaction")
                .baseUnit("acks")
                .register(meters);
        this.writes = Timer.builder("rulesync.acks.write")
                .description("how long writing one batch of acks took")
                .register(meters);
        this.thread = new Thread(this::run, "ack-writer");
        thread.setDaemon(true);
        thread.start();
    }

    /** Completes once the acks are stored; exceptionally when the store failed. */
    public CompletableFuture<Void> write(List<NodeAck> acks) {
        Pending p = new Pending(List.copyOf(acks), new CompletableFuture<>());
        queue.add(p);
        return p.stored();
    }

    private void run() {
        List<Pending> batch = new ArrayList<>();
        while (!stopping) {
            try {
                batch.add(queue.take());
            } catch (InterruptedException e) {
                break;
            }
            // A moment for the rest of a burst (a thousand nodes ack one version within a few hundred ms): one
            // transaction
            // for what arrives in it, rather than one for each few acks; PostgreSQL's cost is mostly per transaction.
            // Slept through, not polled: a poll woke this thread for every ack that arrived (a futex wake on the
            // stream's thread and a switch here, per ack); a sleep is one wake-up per batch.
            if (queue.size() < maxBatch - 1) {
                try {
                    TimeUnit.NANOSECONDS.sleep(linger.toNanos());
                } catch (InterruptedException e) {
                    // stopping: what was taken is written below
                }
            }
            queue.drainTo(batch, maxBatch - 1);
            try {
                List<NodeAck> acks =
                        batch.stream().flatMap(p -> p.acks().stream()).toList();
                writes.record(() -> store.recordAcks(acks));
                batches.record(acks.size());
                batch.forEach(p -> p.stored().complete(null));
                metrics.stored(acks, Instant.now());
            } catch (RuntimeException e) {
                log.warn("storing the acks of {} requests: {}", batch.size(), e.getMessage());
                batch.forEach(p -> p.stored().completeExceptionally(e));
            }
            batch.clear();
        }
        queue.forEach(p -> p.stored().completeExceptionally(new IllegalStateException("the api is stopping")));
    }

    @Override
    public void close() {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
