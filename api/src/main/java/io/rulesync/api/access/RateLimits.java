package io.rulesync.api.access;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;

/**
 * How often one credential may write, and how often one address may fail to authenticate, before the api answers 429
 * with {@code Retry-After} instead of doing the work: a node or script gone wrong cannot flood the ack writer or the
 * audit log, and guessing tokens from one address is slowed to a crawl. Counted in {@value #LIMITED} by {@code kind}.
 *
 * <p>Each key has its own resilience4j {@link RateLimiter} ({@code limit} permits per {@code period}, none waited for);
 * at most 100,000 keys are remembered, the idlest forgotten first.
 */
public final class RateLimits {
    public static final String LIMITED = "rulesync.api.rate.limited";

    private final RateLimiterConfig writes;
    private final RateLimiterConfig failures;
    private final Cache<String, RateLimiter> byWriter = Caffeine.newBuilder()
            .maximumSize(100_000)
            .expireAfterAccess(Duration.ofMinutes(10))
            .build();
    private final Cache<String, RateLimiter> byAddress = Caffeine.newBuilder()
            .maximumSize(100_000)
            .expireAfterAccess(Duration.ofMinutes(10))
            .build();
    private final MeterRegistry meters;

    /**
     * @param writesPerSecond   writes (POST, PUT, PATCH, DELETE) one credential may make a second
     * @param failuresPerMinute failed authentications one address may have a minute before it is refused outright
     */
    public RateLimits(int writesPerSecond, int failuresPerMinute, MeterRegistry meters) {
        this.writes = config(writesPerSecond, Duration.ofSeconds(1));
        this.failures = config(failuresPerMinute, Duration.ofMinutes(1));
        this.meters = meters;
    }

    private static RateLimiterConfig config(int limit, Duration period) {
        return RateLimiterConfig.custom()
                .limitForPeriod(limit)
                .limitRefreshPeriod(period)
                .timeoutDuration(Duration.ZERO)
                .build();
    }

    /** Empty when {@code caller} may write now; else how long to wait. */
    public Duration write(String caller) {
        return take(byWriter.get(caller, k -> RateLimiter.of("writes", writes)), "write");
    }

    /** Whether this address has failed so often that it is refused before its credential is looked at; how long if so. */
    public Duration refusedAddress(String address) {
        RateLimiter l = byAddress.getIfPresent(address);
        if (l == null || l.getMetrics().getAvailablePermissions() > 0) {
            return Duration.ZERO;
        }
        limited("failed-authentication");
        return Duration.ofNanos(Math.max(wait(l), 1_000_000_000L));
    }

    /** Counts a failed authentication from this address. */
    public void failed(String address) {
        byAddress.get(address, k -> RateLimiter.of("failures", failures)).acquirePermission(1);
    }

    private Duration take(RateLimiter l, String kind) {
        if (l.acquirePermission()) {
            return Duration.ZERO;
        }
        limited(kind);
        return Duration.ofNanos(Math.max(wait(l), 1_000_000_000L));
    }

    private static long wait(RateLimiter l) {
        return l instanceof AtomicRateLimiter a
                ? a.getDetailedMetrics().getNanosToWait()
                : l.getRateLimiterConfig().getLimitRefreshPeriod().toNanos();
    }

    /** The {@code Retry-After} value: whole seconds, rounded up. */
    public static String retryAfter(Duration wait) {
        return Long.toString((wait.toMillis() + 999) / 1000);
    }

    private void limited(String kind) {
        Counter.builder(LIMITED)
                .description("requests refused for their rate, by kind")
                .tag("kind", kind)
                .register(meters)
                .increment();
    }
}
