package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo stopped and started again on the same database, as a newcomer does: each run has a new
 * in-process broker whose topics start at offset 0, while PostgreSQL remembers the old broker's
 * positions. The second run must notice that its log is another one, and then lose nothing: an edit
 * becomes a version within the usual time, and a rollback requested through the api completes.
 */
@EndToEnd
@RequiresPostgres(local = true)
@RequiresKafka
class DemoRestartTest {
    @TempDir
    Path dir;

    @Test
    void aRestartedDemoTurnsAnEditIntoAVersionAndCarriesOutARollback() throws Exception {
        DemoRun.copyExamples(dir);
        String db = DemoRun.createDatabase("rulesync_demo_restart_");
        try {
            try (DemoRun first = new DemoRun(dir, db)) {
                assertThat(first.started()).isTrue();
                first.await(0, "shop     node-a   applied version");
                first.await(0, "edge     edge-1   applied version");
            }
            long shopHead = DemoRun.queryLong(db, "SELECT seq FROM cluster_head WHERE cluster = 'shop'");

            try (DemoRun second = new DemoRun(dir, db)) {
                assertThat(second.started()).isTrue();
                assertThat(second.output()).contains("history kept from earlier runs");
                // The new broker's log is another one: every position was reset, in a new epoch.
                assertThat(DemoRun.queryLong(db, "SELECT min(log_epoch) FROM consumer_position"))
                        .isPositive();
                second.await(0, "shop     node-a   applied version");
                int before = second.output().length();

                Path web = dir.resolve("shop/web.yaml");
                Files.writeString(
                        web,
                        Files.readString(web)
                                .replace(
                                        "- {addresses: [10.244.1.12], nodeName: node-b}",
                                        "- {addresses: [10.244.1.12], nodeName: node-b}\n- {addresses: [10.244.1.77], nodeName: node-b}"));
                second.await(before, "EndpointSlice shop/web-7xk2p");
                second.await(before, "shop     node-a   applied version");
                DemoRun.awaitRules(dir, "node-a", "10.244.1.77:8080");
                long edited = DemoRun.queryLong(db, "SELECT seq FROM cluster_head WHERE cluster = 'shop'");
                assertThat(edited).isGreaterThan(shopHead);

                // A rollback requested after the restart is carried out (its event is not dropped below a stale
                // position).
                String api = second.find("api at (http://127\\.0\\.0\\.1:[0-9]+)/api/v1/clusters");
                String operator = second.find("operator (rs_[A-Za-z0-9_-]+)");
                HttpResponse<String> r = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(api + "/api/v1/clusters/shop/rollback"))
                                        .header("Authorization", "Bearer " + operator)
                                        .header("Content-Type", "application/json")
                                        .POST(HttpRequest.BodyPublishers.ofString(
                                                "{\"toVersion\": " + shopHead + ", \"reason\": \"undo the edit\"}"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).contains("\"status\":\"done\"").contains("\"version\":" + (edited + 1));
                second.await(before, "rollback to v" + shopHead + " by demo-operator (undo the edit)");
                assertThat(DemoRun.queryLong(db, "SELECT count(*) FROM operator_action WHERE status = 'pending'"))
                        .isZero();
            }
        } finally {
            DemoRun.drop(db);
        }
    }
}
