package io.rulesync.watcher.publish;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ListingStarted;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ObjectKind;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The events waiting to be published, conflated: for each <em>slot</em> only the latest event is
 * kept. A slot is one object (cluster, kind, key), the sync marker of one (cluster, kind), the
 * start of one cluster's listing, the settings of one cluster, its state digest, the problems of one of its sources, or its problem sync. Events are level-based (each carries a whole state), so the latest event of
 * a slot says everything the older ones did; while Kafka is slow or away, the queue holds at most one
 * event per slot instead of growing with every change.
 *
 * <p>Order: events leave in the order of their (latest) offer. Each slot's latest offer keeps its
 * sequence number, so a sync marker always leaves after the upserts and deletes that preceded it when
 * it was made, which is what makes the marker agree with the stream before it.
 *
 * <p>A state digest describes its cluster's state when it was made, so it must leave after exactly the
 * events offered before it. When one of those is superseded by a later offer (which leaves after the
 * digest), the digest would describe a state the stream never shows: it is dropped, and the next one
 * checks instead.
 *
 * <p>Delivery protocol, for one publisher: {@link #take} hands out a batch and marks its slots in
 * flight (no second event of an in-flight slot is handed out, so two states of one key are never
 * in flight together); {@link #settle} reports the outcome. A failed event goes back in its original
 * place unless a newer event for its slot was offered meanwhile (that one then wins, and publishing
 * the older one again would go back in time).
 */
public final class PendingEvents {
    /** What an event is about; a later event about the same slot replaces an earlier one. */
    public record Slot(String cluster, Object subject) {
        public static Slot of(ClusterEvent e) {
            Object subject;
            if (e instanceof ObjectUpserted u) {
                subject = u.ref();
            } else if (e instanceof ObjectDeleted d) {
                subject = d.ref();
            } else if (e instanceof SyncMarker s) {
                subject = new MarkerOf(s.kind());
            } else if (e instanceof ListingStarted) {
                subject = Listing.INSTANCE;
            } else if (e instanceof SettingsChanged) {
                subject = Settings.INSTANCE;
            } else if (e instanceof StateDigest) {
                subject = Digest.INSTANCE;
            } else if (e instanceof ProblemsReported r) {
                subject = new ProblemsOf(r.source());
            } else if (e instanceof ProblemSync) {
                subject = ProblemSources.INSTANCE;
            } else {
                throw new IllegalArgumentException("unknown event " + e);
            }
            return new Slot(e.cluster(), subject);
        }
    }

    private record MarkerOf(ObjectKind kind) {}

    private enum Listing {
        INSTANCE
    }

    private enum Settings {
        INSTANCE
    }

    private enum Digest {
        INSTANCE
    }

    private record ProblemsOf(String source) {}

    private enum ProblemSources {
        INSTANCE
    }

    /** One event handed out for publishing, with its sequence number. */
    public record Entry(long seq, Slot slot, ClusterEvent event) {}

    private final TreeMap<Long, Entry> queue = new TreeMap<>();
    private final Map<Slot, Long> queuedSeq = new HashMap<>();
    /** The latest sequence number offered per slot that is queued or in flight. */
    private final Map<Slot, Long> latestSeq = new HashMap<>();

    private final Set<Slot> inFlight = new HashSet<>();
    private long nextSeq = 1;
    private long superseded;
    private long staleDigests;

    /** Queues {@code event}, replacing any queued event of the same slot. */
    public synchronized void offer(ClusterEvent event) {
        Slot slot = Slot.of(event);
        long seq = nextSeq++;
        Long old = queuedSeq.put(slot, seq);
        if (old != null) {
            queue.remove(old);
            superseded++;
            dropStaleDigest(slot, old);
        }
        queue.put(seq, new Entry(seq, slot, event));
        latestSeq.put(slot, seq);
        notifyAll();
    }

    /** A digest of the slot's cluster queued after {@code supersededSeq} no longer matches the stream: drop it. */
    private void dropStaleDigest(Slot slot, long supersededSeq) {
        Slot digest = new Slot(slot.cluster(), Digest.INSTANCE);
        Long d = queuedSeq.get(digest);
        if (slot.equals(digest) || d == null || d < supersededSeq) {
            return;
        }
        queue.remove(d);
        queuedSeq.remove(digest);
        if (!inFlight.contains(digest)) {
            latestSeq.remove(digest);
        }
        staleDigests++;
    }

    /**
     * Up to {@code max} queued events in order, skipping slots in flight; waits up to
     * {@code waitMillis} for one when none is ready. Returns an empty list on timeout.
     */
    public synchronized List<Entry> take(int max, long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (true) {
            List<Entry> out = new ArrayList<>();
            for (Iterator<Entry> it = queue.values().iterator(); it.hasNext() && out.size() < max; ) {
                Entry e = it.next();
                if (inFlight.contains(e.slot())) {
                    continue;
                }
                it.remove();
                queuedSeq.remove(e.slot());
                inFlight.add(e.slot());
                out.add(e);
            }
            if (!out.isEmpty()) {
                return out;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return out;
            }
            wait(Math.max(1, left / 1_000_000L));
        }
    }

    /**
     * Reports the outcome of a batch from {@link #take}: the entries whose bit is set in
     * {@code failed} are put back unless their slot has a newer event by now.
     */
    public synchronized void settle(List<Entry> batch, BitSet failed) {
        for (int i = 0; i < batch.size(); i++) {
            Entry e = batch.get(i);
            inFlight.remove(e.slot());
            boolean newer = latestSeq.getOrDefault(e.slot(), e.seq()) != e.seq();
            if (failed.get(i) && !newer) {
                queue.put(e.seq(), e);
                queuedSeq.put(e.slot(), e.seq());
            } else if (!newer) {
                latestSeq.remove(e.slot());
            }
        }
        notifyAll();
    }

    /** Events waiting (not counting those in flight). */
    public synchronized int size() {
        return queue.size();
    }

    /** Events not yet delivered: queued or in flight. */
    public synchronized int unpublished() {
        return queue.size() + inFlight.size();
    }

    /** True when nothing is queued or in flight. */
    public synchronized boolean isIdle() {
        return queue.isEmpty() && inFlight.isEmpty();
    }

    /** How many queued state digests were dropped because an event before them was superseded. */
    public synchronized long staleDigestCount() {
        return staleDigests;
    }

    /** How many queued events were replaced by newer ones before being published. */
    public synchronized long supersededCount() {
        return superseded;
    }
}
