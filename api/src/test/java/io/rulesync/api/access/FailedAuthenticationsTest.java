package io.rulesync.api.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class FailedAuthenticationsTest {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T12:00:00Z"));
    private final FailedAuthentications log = new FailedAuthentications(Duration.ofMinutes(1), 2, now::get);

    @Test
    void oneLinePerAddressPerIntervalThenTheCountLeftOut() {
        assertThat(log.failed("GET", "/api/v1/clusters", "10.0.0.5", "unknown token"))
                .contains("authentication failed: GET /api/v1/clusters from 10.0.0.5: unknown token");
        for (int i = 0; i < 41; i++) {
            now.set(now.get().plusSeconds(1));
            assertThat(log.failed("GET", "/api/v1/audit", "10.0.0.5", "unknown token"))
                    .isEmpty();
        }
        // Another address has its own interval.
        assertThat(log.failed("POST", "/api/v1/clusters/c/rollback", "10.0.0.6", "no Authorization header"))
                .isPresent();
        now.set(now.get().plusSeconds(19));
        assertThat(log.failed("GET", "/api/v1/audit", "10.0.0.5", "unknown token"))
                .contains("authentication failed: GET /api/v1/audit from 10.0.0.5: unknown token"
                        + " (41 more from 10.0.0.5 since the last line, not logged)");
        now.set(now.get().plusSeconds(60));
        assertThat(log.failed("GET", "/api/v1/audit", "10.0.0.5", "unknown token"))
                .contains("authentication failed: GET /api/v1/audit from 10.0.0.5: unknown token");
    }

    @Test
    void inputIsEscapedAndAddressesAreBounded() {
        assertThat(log.failed("GET", "/a\nforged line", "10.0.0.5", "unknown token")
                        .orElseThrow())
                .isEqualTo("authentication failed: GET /a\\x0aforged line from 10.0.0.5: unknown token");
        assertThat(log.failed("GET", "/", "10.0.0.6", "unknown token")).isPresent();
        // A third address pushes out the least recently failing one, which then starts afresh.
        assertThat(log.failed("GET", "/", "10.0.0.7", "unknown token")).isPresent();
        assertThat(log.failed("GET", "/", "10.0.0.5", "unknown token")).isPresent();
        assertThat(log.failed("GET", "/", "10.0.0.7", "unknown token")).isEmpty();
    }
}
