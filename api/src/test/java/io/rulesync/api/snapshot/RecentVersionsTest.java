package io.rulesync.api.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.rules.ClusterRules;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RecentVersionsTest {
    private static final RecentVersions.StoredVersion V =
            new RecentVersions.StoredVersion(Instant.EPOCH, ClusterRules.EMPTY);

    @Test
    void twentyConcurrentRequestsShareOneLoad() throws Exception {
        RecentVersions recent = new RecentVersions(4);
        AtomicInteger loads = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            List<Future<Optional<RecentVersions.StoredVersion>>> results = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                results.add(pool.submit(() -> recent.get("c", 7, "", () -> {
                    loads.incrementAndGet();
                    try {
                        release.await(); // a slow rebuild: everybody else arrives meanwhile
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return Optional.of(V);
                })));
            }
            await().atMost(60, TimeUnit.SECONDS)
                    .pollInterval(10, TimeUnit.MILLISECONDS)
                    .until(() -> loads.get() > 0);
            release.countDown();
            for (Future<Optional<RecentVersions.StoredVersion>> f : results) {
                assertThat(f.get(60, TimeUnit.SECONDS)).containsSame(V);
            }
            assertThat(loads.get()).isEqualTo(1);
            assertThat(recent.get("c", 7, "", () -> {
                        throw new AssertionError("loaded again");
                    }))
                    .containsSame(V);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void keepsOnlyTheMostRecentlyUsed() {
        RecentVersions recent = new RecentVersions(2);
        AtomicInteger loads = new AtomicInteger();
        recent.get("c", 1, "", () -> count(loads));
        recent.get("c", 2, "", () -> count(loads));
        recent.get("c", 1, "", () -> count(loads)); // 1 is now the most recent
        recent.get("c", 3, "", () -> count(loads)); // evicts 2
        assertThat(recent.size()).isEqualTo(2);
        assertThat(loads.get()).isEqualTo(3);
        recent.get("c", 1, "", () -> count(loads));
        assertThat(loads.get()).isEqualTo(3);
        recent.get("c", 2, "", () -> count(loads));
        assertThat(loads.get()).isEqualTo(4);
    }

    @Test
    void missingVersionsAndFailuresAreNotRemembered() {
        RecentVersions recent = new RecentVersions(2);
        assertThat(recent.get("c", 5, "", Optional::empty)).isEmpty();
        assertThatThrownBy(() -> recent.get("c", 6, "", () -> {
                    throw new IllegalStateException("database down");
                }))
                .hasMessage("database down");
        assertThat(recent.size()).isZero();
        assertThat(recent.get("c", 5, "", () -> Optional.of(V))).containsSame(V);
        assertThat(recent.get("c", 6, "", () -> Optional.of(V))).containsSame(V);
    }

    private static Optional<RecentVersions.StoredVersion> count(AtomicInteger loads) {
        loads.incrementAndGet();
        return Optional.of(V);
    }
}
