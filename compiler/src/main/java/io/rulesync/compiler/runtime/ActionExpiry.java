package io.rulesync.compiler.runtime;

import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RecordedAction;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends operator actions that no compiler carried out within {@code timeout}: their request was lost
 * (with a replaced events log) or never consumed. Each becomes {@code expired} in the audit log with
 * the reason, so it does not block the cluster's next action for good. The api also expires a
 * cluster's stale action when the next one is requested; this sweep keeps the audit log true when
 * none is.
 */
public final class ActionExpiry implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ActionExpiry.class);

    private final OperatorActionStore actions;
    private final Duration timeout;
    private final Clock clock;
    private final CompilerMetrics metrics;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rulesync-action-expiry");
        t.setDaemon(true);
        return t;
    });

    public ActionExpiry(OperatorActionStore actions, Duration timeout, Clock clock, CompilerMetrics metrics) {
        this.actions = actions;
        this.timeout = timeout;
        this.clock = clock;
        this.metrics = metrics;
        long every = Math.max(1000, Math.min(timeout.toMillis() / 4, 30_000));
        scheduler.scheduleWithFixedDelay(this::sweepQuietly, every, every, TimeUnit.MILLISECONDS);
    }

    /** Expires what is overdue now; returns what it expired. */
    public List<RecordedAction> sweep() {
        Instant now = clock.instant();
        List<RecordedAction> expired =
                actions.expire(null, now.minus(timeout), now, OperatorActionStore.expiredOutcome(timeout));
        for (RecordedAction a : expired) {
            log.warn(
                    "operator action {} ({} of cluster {} by {}, requested {}) expired: {}",
                    a.id(),
                    a.toVersion() == null ? a.action() : a.action() + " to v" + a.toVersion(),
                    a.cluster(),
                    a.actor(),
                    a.requestedAt(),
                    a.outcome());
        }
        if (!expired.isEmpty()) {
            metrics.actionsExpired(expired.size());
        }
        return expired;
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            log.warn("expiring overdue operator actions failed, will retry: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
