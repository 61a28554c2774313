package io.rulesync.watcher.publish;

import io.rulesync.model.event.ClusterEvent;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Where published events go: Kafka ({@link KafkaEventSink}) in production, memory in tests. The
 * {@link Publisher} calls it from one thread.
 */
public interface EventSink extends AutoCloseable {
    /**
     * Sends {@code events} in order and waits until each is delivered or has failed. Delivery
     * failures are reported, not thrown.
     */
    Delivery send(List<ClusterEvent> events);

    /**
     * {@code listener} hears of each cluster whose events this sink publishes again after another writer had taken it
     * (a sink without such a fence never calls it).
     */
    default void onRetaken(Consumer<String> listener) {}

    /** Flushes and releases resources; called once, after the last {@link #send}. */
    @Override
    void close();

    /**
     * The outcome of one {@link #send}.
     *
     * @param failed  positions (in the batch) that were not delivered and may be retried
     * @param dropped positions that can never be delivered (e.g. larger than the broker accepts); not
     *                retried
     * @param error   the first failure, for the log; null when everything was delivered
     */
    record Delivery(BitSet failed, BitSet dropped, Exception error) {
        public Delivery {
            failed = (BitSet) failed.clone();
            dropped = (BitSet) dropped.clone();
        }

        public static Delivery ok() {
            return new Delivery(new BitSet(), new BitSet(), null);
        }

        /** Everything from {@code from} to {@code size} failed with {@code error}. */
        public static Delivery failedFrom(int from, int size, Exception error) {
            BitSet f = new BitSet();
            f.set(from, size);
            return new Delivery(f, new BitSet(), Objects.requireNonNull(error));
        }

        public boolean allDelivered() {
            return failed.isEmpty() && dropped.isEmpty();
        }
    }
}
