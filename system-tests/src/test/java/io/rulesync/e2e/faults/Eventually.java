package io.rulesync.e2e.faults;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The fault harnesses' waits, on Awaitility: a condition polled until it holds. A condition that throws (the database or
 * the broker still coming back) counts as not yet.
 */
final class Eventually {
    private static final Duration POLL = Duration.ofMillis(250);

    private Eventually() {}

    /** Whether {@code done} held within {@code timeout}. */
    static boolean within(Duration timeout, BooleanSupplier done) {
        try {
            Awaitility.await()
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(POLL)
                    .ignoreExceptions()
                    .until(done::getAsBoolean);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    /** Waits until {@code done} holds; fails the harness, naming {@code what}, if it did not within {@code timeout}. */
    static void require(String what, Duration timeout, BooleanSupplier done) {
        if (!within(timeout, done)) {
            throw new IllegalStateException("no sign of " + what + " within " + timeout);
        }
    }
}
