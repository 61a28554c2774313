package io.rulesync.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Waits that grow, are spread at random, and start over after a success. */
class RetriesTest {
    @Test
    void aNodesWaitsGrowToTheirCapEachDrawnAroundItsStep() {
        Retries r = Retries.forNodes();
        long[] steps = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000};
        for (long step : steps) {
            long w = r.failed().toMillis();
            assertThat(w).as("step " + step).isBetween(step / 2, step * 3 / 2);
        }
        r.succeeded();
        assertThat(r.failures()).isZero();
        assertThat(r.failed().toMillis()).isBetween(250L, 750L);
    }

    @Test
    void aRequestIsRetriedAtOnceTheFirstTime() {
        Retries r = Retries.forRequests();
        assertThat(r.failed()).isEqualTo(Duration.ZERO);
        assertThat(r.failed().toMillis()).isBetween(500L, 1500L);
    }

    /** A thousand nodes that failed together do not retry together. */
    @Test
    void nodesThatFailedTogetherAreSpread() {
        Set<Long> firsts = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            firsts.add(Retries.forNodes().failed().toMillis());
        }
        assertThat(firsts.size()).isGreaterThan(300);
    }
}
