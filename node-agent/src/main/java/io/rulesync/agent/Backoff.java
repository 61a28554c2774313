package io.rulesync.agent;

import java.time.Duration;
import java.time.Instant;

/** When to try again after a failure: never a tight loop, 1 s, 2 s, 4 s, ... up to 2 minutes between attempts. */
final class Backoff {
    private static final Duration FIRST = Duration.ofSeconds(1);
    private static final Duration MAX = Duration.ofMinutes(2);

    private Instant retryAt;
    private Duration delay = FIRST;

    /** A retry is due: a failure happened and its time has come. */
    boolean due(Instant now) {
        return retryAt != null && !now.isBefore(retryAt);
    }

    /** Backing off: the retry is not due yet. */
    boolean waiting(Instant now) {
        return retryAt != null && now.isBefore(retryAt);
    }

    void failed(Instant now) {
        retryAt = now.plus(delay);
        Duration next = delay.multipliedBy(2);
        delay = next.compareTo(MAX) > 0 ? MAX : next;
    }

    /** Nothing to retry (the kernel already holds the latest), but the next failure waits as long as the last would have. */
    void cancel() {
        retryAt = null;
    }

    void succeeded() {
        retryAt = null;
        delay = FIRST;
    }
}
