package io.rulesync.agent;

import io.rulesync.process.Retries;
import java.time.Duration;
import java.time.Instant;

/**
 * When to try again after a failure: never a tight loop, and never in step with the other nodes. The n-th wait is
 * drawn between half and all of 1, 2, 4 ... seconds, up to 2 minutes (retries around three quarters of each, ±1/3),
 * so nodes that failed the same version together do not ack their retries together.
 */
final class Backoff {
    private final Retries waits = new Retries(Duration.ofMillis(750), Duration.ofSeconds(90), 1.0 / 3, false);
    private Instant retryAt;

    /** A retry is due: a failure happened and its time has come. */
    boolean due(Instant now) {
        return retryAt != null && !now.isBefore(retryAt);
    }

    /** Backing off: the retry is not due yet. */
    boolean waiting(Instant now) {
        return retryAt != null && now.isBefore(retryAt);
    }

    void failed(Instant now) {
        retryAt = now.plus(waits.failed());
    }

    /** Nothing to retry (the kernel already holds the latest), but the next failure waits as long as the last would have. */
    void cancel() {
        retryAt = null;
    }

    void succeeded() {
        retryAt = null;
        waits.succeeded();
    }
}
