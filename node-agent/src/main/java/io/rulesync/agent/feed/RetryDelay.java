package io.rulesync.agent.feed;

import java.time.Duration;

/**
 * How long to wait before sending a request to the api again after it failed: at once the first time (a pooled
 * connection the server had just closed fails like this, and is no news), then 1, 2, 4 ... 30 s. Shared by the delta
 * polls and the acks, which fail for the same reasons.
 */
final class RetryDelay {
    private static final Duration FIRST = Duration.ofSeconds(1);
    private static final Duration MAX = Duration.ofSeconds(30);

    private int failures;
    private Duration delay = Duration.ZERO;

    /** One more failure: the wait before the next attempt (zero after the first). */
    Duration failed() {
        if (failures++ == 0) {
            return Duration.ZERO;
        }
        delay = delay.isZero() ? FIRST : delay.multipliedBy(2).compareTo(MAX) > 0 ? MAX : delay.multipliedBy(2);
        return delay;
    }

    /** The request went through: the next failure is a first one again. */
    void succeeded() {
        failures = 0;
        delay = Duration.ZERO;
    }
}
