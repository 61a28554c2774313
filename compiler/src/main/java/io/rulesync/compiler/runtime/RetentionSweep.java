package io.rulesync.compiler.runtime;

import io.rulesync.compiler.checkpoint.Checkpoint;
import io.rulesync.compiler.retention.RetentionPolicy;
import io.rulesync.store.EventLog;
import io.rulesync.store.HistoryPruning;
import io.rulesync.store.VersionHistory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each cluster's history within its {@link RetentionPolicy}: every {@code interval}, for every cluster, works
 * out the floor (the policy, held lower by what nodes run, a pin, a pending rollback) and has {@link HistoryPruning}
 * remove what is below it. Events go only where a checkpoint stands for them, and only one this compiler reads back
 * as written: a rebuild after the removal must not need them.
 *
 * <p>Runs beside the partitions' batches, on a thread of its own: a pass removes at most a bounded number of
 * versions and events per cluster, so a long backlog (retention switched on for an old history) is worked off over
 * several passes rather than in one long transaction.
 */
public final class RetentionSweep implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RetentionSweep.class);
    public static final int DEFAULT_MAX_VERSIONS = 10_000;
    public static final int DEFAULT_MAX_EVENTS = 100_000;

    private final HistoryPruning pruning;
    private final VersionHistory history;
    private final EventLog events;
    private final RetentionPolicy policy;
    private final Clock clock;
    private final CompilerMetrics metrics;
    private final int maxVersions;
    private final int maxEvents;
    private final ScheduledExecutorService scheduler;
    /** Per cluster, the last event of the newest checkpoint judged (negative: refused): it is not read again until it changes. */
    private final Map<String, Long> judgedCheckpoints = new HashMap<>();
    /** Per cluster, what held its floor below the policy when last said (said once per change). */
    private final Map<String, String> heldBy = new HashMap<>();

    public RetentionSweep(
            HistoryPruning pruning,
            VersionHistory history,
            EventLog events,
            RetentionPolicy policy,
            Clock clock,
            CompilerMetrics metrics,
            int maxVersions,
            int maxEvents,
            Duration interval) {
        this.pruning = pruning;
        this.history = history;
        this.events = events;
        this.policy = policy;
        this.clock = clock;
        this.metrics = metrics;
        this.maxVersions = maxVersions;
        this.maxEvents = maxEvents;
        if (interval == null || policy.keepsAll()) {
            scheduler = null; // run by hand (tests), or nothing to do
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rulesync-retention");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(
                this::sweepQuietly, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One pass over every cluster; returns what it removed from each cluster it removed something from. */
    public synchronized Map<String, HistoryPruning.Pruned> sweep() {
        Map<String, HistoryPruning.Pruned> out = new TreeMap<>();
        if (policy.keepsAll()) {
            return out;
        }
        Instant now = clock.instant();
        for (String cluster : history.heads().keySet()) {
            HistoryPruning.Holds h = pruning.holds(cluster, policy.ageCut(now).orElse(null));
            List<RetentionPolicy.Hold> holds = new ArrayList<>();
            h.oldestRunning()
                    .ifPresent(n -> holds.add(new RetentionPolicy.Hold(
                            n.version(), "node " + n.node() + " runs version " + n.version())));
            h.pinnedTo()
                    .ifPresent(v -> holds.add(new RetentionPolicy.Hold(v, "the cluster is pinned to version " + v)));
            h.pendingRollbackTo()
                    .ifPresent(v -> holds.add(new RetentionPolicy.Hold(v, "a pending rollback names version " + v)));
            RetentionPolicy.Floor floor = policy.floor(h.head(), h.firstYoung(), holds);
            sayHeld(cluster, floor);
            HistoryPruning.Pruned p =
                    pruning.prune(cluster, floor.version(), usableCheckpoint(cluster), maxVersions, maxEvents, now);
            if (p.any()) {
                out.put(cluster, p);
                log.info(
                        "cluster {}: retention removed {} version(s) (versions {}-{} remain), {} event(s), {} fragment(s) and {} "
                                + "dead letter(s)",
                        cluster,
                        p.versions(),
                        p.oldest(),
                        h.head(),
                        p.events(),
                        p.fragments(),
                        p.deadLetters());
                metrics.retentionRemoved("versions", p.versions());
                metrics.retentionRemoved("events", p.events());
                metrics.retentionRemoved("fragments", p.fragments());
                metrics.retentionRemoved("dead_letters", p.deadLetters());
            }
        }
        policy.ageCut(now).ifPresent(cut -> metrics.retentionRemoved("dead_letters", pruning.pruneDeadLetters(cut)));
        return out;
    }

    /**
     * The last event of the cluster's checkpoint when this compiler reads it back as written: events up to there may
     * go. 0 (none may go) without one, or when it does not read back, which is said once per checkpoint. A checkpoint
     * already judged is not read again (a 10,000-Service one is 21 MB of text): only which event it stands for is.
     */
    private long usableCheckpoint(String cluster) {
        OptionalLong current = events.checkpointEvent(cluster);
        if (current.isEmpty()) {
            return 0;
        }
        Long judged = judgedCheckpoints.get(cluster); // negative: that checkpoint was read and refused
        if (judged != null && Math.abs(judged) == current.getAsLong()) {
            return Math.max(judged, 0);
        }
        Optional<EventLog.StoredCheckpoint> stored = events.checkpoint(cluster);
        if (stored.isEmpty()) {
            return 0;
        }
        long last = stored.get().lastEventId(); // a later one may have been written since
        if (Checkpoint.read(cluster, stored.get().text()) instanceof Checkpoint.Read.Unusable u) {
            judgedCheckpoints.put(cluster, -last);
            log.warn(
                    "cluster {}: its checkpoint at event {} does not read back ({}); retention keeps its events until a "
                            + "usable checkpoint is written",
                    cluster,
                    last,
                    u.reason());
            return 0;
        }
        judgedCheckpoints.put(cluster, last);
        return last;
    }

    private void sayHeld(String cluster, RetentionPolicy.Floor floor) {
        String now = floor.heldBy().orElse(null);
        if (now != null && !now.equals(heldBy.get(cluster))) {
            log.info(
                    "cluster {}: history is kept from version {}, older than the retention policy asks: {}",
                    cluster,
                    floor.version(),
                    now);
        }
        if (now == null) {
            heldBy.remove(cluster);
        } else {
            heldBy.put(cluster, now);
        }
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            log.warn("retention pass failed, will retry: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }
}
