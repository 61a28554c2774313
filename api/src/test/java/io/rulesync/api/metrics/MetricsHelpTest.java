package io.rulesync.api.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the api's {@code /actuator/prometheus} exposes is read by people at an alert or a dashboard: each of our metrics
 * says what it counts, and Prometheus's own linter finds nothing to say about them.
 */
@RequiresPostgres
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsHelpTest {
    private TestApi api;
    private String scrape;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
        // A refused credential, so that the counter of refusals exists in the scrape.
        api.raw("GET", "/api/v1/clusters", "rs_guess", "127.0.0.4");
        scrape = api.get("/actuator/prometheus").body();
    }

    @AfterAll
    void tearDown() {
        api.close();
    }

    @Test
    void everyMetricOfOursSaysWhatItCounts() {
        List<String> ours = scrape.lines()
                .filter(l -> l.startsWith("# TYPE rulesync_"))
                .map(l -> l.split(" ")[2])
                .toList();
        assertThat(ours).contains("rulesync_api_authentication_failures_total", "rulesync_deltas_waiting");
        List<String> silent = new ArrayList<>();
        for (String metric : ours) {
            String help = scrape.lines()
                    .filter(l -> l.startsWith("# HELP " + metric + " "))
                    .findFirst()
                    .orElse("# HELP " + metric + " ");
            if (help.substring(("# HELP " + metric + " ").length()).isBlank()) {
                silent.add(metric);
            }
        }
        assertThat(silent).as("metrics without help text").isEmpty();
    }

    @Test
    @RequiresTool("promtool")
    void promtoolFindsNothingToSayAboutOurMetrics() throws Exception {
        Process p = new ProcessBuilder("promtool", "check", "metrics")
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().write(scrape.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // The libraries' metrics (JVM, HTTP server, pools) are theirs to name; ours must pass.
        assertThat(said.lines().filter(l -> l.contains("rulesync_")).toList())
                .as(said)
                .isEmpty();
    }
}
