package io.rulesync.watcher.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polls a condition; the timeouts are generous because CI machines are slow, and no test asserts on time. */
public final class Await {
    public static final Duration LONG = Duration.ofSeconds(30);

    private Await() {
    }

    public static void until(BooleanSupplier condition, Supplier<String> whatWeWaitFor) {
        until(LONG, condition, whatWeWaitFor);
    }

    public static void until(Duration timeout, BooleanSupplier condition, Supplier<String> whatWeWaitFor) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for: " + whatWeWaitFor.get());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
