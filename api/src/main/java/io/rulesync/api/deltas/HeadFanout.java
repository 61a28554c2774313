package io.rulesync.api.deltas;

import io.rulesync.api.rollout.Rollouts;
import java.time.Instant;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.TaskScheduler;

/**
 * The chain from a stored version to the nodes waiting for it, in one object, as go-control-plane's snapshot cache
 * answers its open watches when a snapshot is set:
 *
 * <ol>
 *   <li>a cluster's head moves ({@link HeadWatch}: PostgreSQL's announcement, or the periodic re-read);
 *   <li>what each node is released follows it, or a staged rollout holds it back ({@link Rollouts}: a gated cluster
 *       takes its next step at once, not at the next tick);
 *   <li>the parked requests and streams of the nodes it releases are answered ({@link DeltaWaits}).
 * </ol>
 *
 * A rollout step that releases a wave wakes that wave's nodes the same way, and a head that moves back (a restore from
 * a backup) rewinds the waiters. Stopping answers every parked request, before the web server's graceful shutdown
 * waits for them (this lifecycle's phase is above the server's, so it stops first).
 */
public final class HeadFanout implements SmartLifecycle {
    private final DeltaWaits waits;
    private volatile boolean running;

    /** Starts the chain: from here on, heads are read and waiters woken. */
    public HeadFanout(HeadWatch heads, DeltaWaits waits, Rollouts rollouts, TaskScheduler steps) {
        this.waits = waits;
        rollouts.onRelease(waits::advanced);
        heads.start(new HeadWatch.Listener() {
            @Override
            public void advanced(String cluster, long head) {
                waits.advanced(cluster, head);
                if (rollouts.gated(cluster)) {
                    // Off the watch's thread, on the scheduler the ticks run on.
                    steps.schedule(rollouts::tick, Instant.now());
                }
            }

            @Override
            public void rewound(String cluster, long head) {
                waits.rewound(cluster, head);
            }
        });
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        waits.stop();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
