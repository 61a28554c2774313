package io.rulesync.process;

import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;

/**
 * How long to wait before trying again after a failure, for every part of rulesync that retries: growing from
 * {@code first}, doubling up to {@code max}, each wait drawn at random around its step (resilience4j's exponential
 * random backoff), so that a thousand nodes, or a few watchers or compilers, that lost the same service together do not
 * come back together. Not thread-safe: one per thing that retries.
 */
public final class Retries {
    /** A node's stream: 0.5 s, 1 s, 2 s ... 30 s, each ±50 %, from the first failure on. */
    public static Retries forNodes() {
        return new Retries(Duration.ofMillis(500), Duration.ofSeconds(30), 0.5, false);
    }

    /**
     * A request: at once the first time (a pooled connection the server had just closed fails like this, and is no
     * news), then 1 s, 2 s ... 30 s, each ±50 %.
     */
    public static Retries forRequests() {
        return new Retries(Duration.ofSeconds(1), Duration.ofSeconds(30), true);
    }

    /** Central roles reaching a broker or database: {@code first} doubling to {@code max}, each ±50 %. */
    public static Retries doubling(Duration first, Duration max) {
        return new Retries(first, max, 0.5, false);
    }

    private final IntervalFunction interval;
    private final boolean firstAtOnce;
    private int failures;

    public Retries(Duration first, Duration max, boolean firstAtOnce) {
        this(first, max, 0.5, firstAtOnce);
    }

    /**
     * @param spread how far each wait may fall from its step, as a fraction of it (0.5: between half and one and a half
     *     times the step)
     */
    public Retries(Duration first, Duration max, double spread, boolean firstAtOnce) {
        this.interval = IntervalFunction.ofExponentialRandomBackoff(first, 2.0, spread, max);
        this.firstAtOnce = firstAtOnce;
    }

    /** One more failure: how long to wait before the next attempt. */
    public Duration failed() {
        failures++;
        if (firstAtOnce) {
            return failures == 1 ? Duration.ZERO : Duration.ofMillis(interval.apply(failures - 1));
        }
        return Duration.ofMillis(interval.apply(failures));
    }

    /** Failures since the last success. */
    public int failures() {
        return failures;
    }

    /** It went through: the next failure is a first one again. */
    public void succeeded() {
        failures = 0;
    }
}
