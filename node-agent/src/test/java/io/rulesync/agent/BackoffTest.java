package io.rulesync.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private static final Instant T0 = Instant.parse("2026-12-05T00:00:00Z");

    /** The n-th wait of a node, in milliseconds after the failure. */
    private static long wait(Backoff b, int n) {
        for (int i = 1; i < n; i++) {
            b.failed(T0);
        }
        b.failed(T0);
        long lo = 0;
        long hi = Duration.ofMinutes(10).toMillis();
        while (lo < hi) {
            long mid = (lo + hi) / 2;
            if (b.due(T0.plusMillis(mid))) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    @Test
    void waitsDoubleWithinHalfAndAllOfTheirStepAndNodesDrawThemApart() {
        Set<Long> firsts = new HashSet<>();
        for (int node = 0; node < 200; node++) {
            long first = wait(new Backoff(), 1);
            assertThat(first).isBetween(500L, 1_000L);
            firsts.add(first);
            assertThat(wait(new Backoff(), 3)).isBetween(2_000L, 4_000L);
            assertThat(wait(new Backoff(), 12)).isBetween(60_000L, 120_000L);
        }
        assertThat(firsts).as("200 nodes that failed together").hasSizeGreaterThan(100);
    }

    @Test
    void aSuccessStartsOverAndACancelKeepsTheStep() {
        Backoff b = new Backoff();
        b.failed(T0);
        b.failed(T0);
        b.succeeded();
        assertThat(b.waiting(T0)).isFalse();
        b.failed(T0);
        assertThat(b.due(T0.plusSeconds(1))).as("a first failure again").isTrue();
        b.cancel();
        assertThat(b.due(T0.plusSeconds(10))).as("nothing to retry").isFalse();
        b.failed(T0);
        assertThat(b.waiting(T0.plusMillis(999)))
                .as("the step after the last, not the first")
                .isTrue();
    }
}
