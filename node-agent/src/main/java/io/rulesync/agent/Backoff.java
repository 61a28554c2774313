package io.rulesync.agent;

import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.time.Instant;

/**
 * When to try again after a failure: never a tight loop, and never in step with the other nodes. The n-th wait is
 * drawn between half and all of 1, 2, 4 ... seconds, up to 2 minutes (resilience4j's exponential random backoff
 * around three quarters of each), so nodes that failed the same version together do not ack their retries together.
 */
final class Backoff {
    private static final IntervalFunction WAITS =
            IntervalFunction.ofExponentialRandomBackoff(Duration.ofMillis(750), 2.0, 1.0 / 3, Duration.ofSeconds(90));

    private Instant retryAt;
    private int failures;

    /** A retry is due: a failure happened and its time has come. */
    boolean due(Instant now) {
        return retryAt != null && !now.isBefore(retryAt);
    }

    /** Backing off: the retry is not due yet. */
    boolean waiting(Instant now) {
        return retryAt != null && now.isBefore(retryAt);
    }

    void failed(Instant now) {
        failures++;
        retryAt = now.plusMillis(WAITS.apply(failures));
    }

    /** Nothing to retry (the kernel already holds the latest), but the next failure waits as long as the last would have. */
    void cancel() {
        retryAt = null;
    }

    void succeeded() {
        retryAt = null;
        failures = 0;
    }
}
