package io.rulesync.api;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.testsupport.PrivatePostgres;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.tiers.Tiers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The api while its PostgreSQL is down, on a server of the test's own that it stops and starts:
 * requests fail fast with a 503 problem, readiness says DOWN (so a load balancer stops sending
 * traffic) while liveness stays UP (a restart would not help), the health endpoint answers, and
 * once the server is back the api serves again by itself, acks included (they have a connection of their own).
 */
@Tag(Tiers.INTEGRATION)
class DatabaseOutageApiTest {
    /** The pool waits 2 s for a connection; the rest is slack for a busy two-core machine. */
    private static final Duration FAST = Duration.ofSeconds(5);
    private static final List<String> READS = List.of("/api/v1/clusters", "/api/v1/clusters/shop/versions",
            "/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "/api/v1/clusters/shop/versions/latest/rules?node=n1",
            "/api/v1/clusters/shop/events", "/api/v1/clusters/shop/nodes", "/api/v1/audit");

    @Test
    void requestsFailFastReadinessFollowsTheDatabaseAndTheApiRecoversByItself() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.create()) {
            String url = pg.url("postgres");
            Flyway.configure().dataSource(url, "postgres", "").load().migrate();
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(url);
            ds.setUser("postgres");
            StoredClusters.twoVersions(CompilerStores.on(ds), "shop");
            try (TestApi api = TestApi.on(url, "postgres", "")) {
                String node = api.nodeToken("shop", "n1");
                for (String path : READS) {
                    assertThat(api.get(path).statusCode()).as(path).isEqualTo(200);
                }
                assertThat(api.get("/actuator/health/readiness", null).statusCode()).isEqualTo(200);

                pg.stop();
                for (String path : READS) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = api.get(path);
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    System.out.printf("database down: GET %s answered %d in %d ms%n", path, r.statusCode(), took.toMillis());
                    assertProblem(r, 503, null, "reading the version store failed; retry later");
                    assertThat(took).as(path).isLessThan(FAST);
                }
                for (String probe : List.of("/actuator/health/readiness", "/actuator/health")) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = api.get(probe, null);
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    System.out.printf("database down: GET %s answered %d %s in %d ms%n", probe, r.statusCode(), r.body(), took.toMillis());
                    assertThat(r.statusCode()).as(probe).isEqualTo(503);
                    assertThat(TestApi.json(r).get("status")).isEqualTo("DOWN");
                    assertThat(took).as(probe).isLessThan(FAST);
                }
                // Acks go through a connection of their own (AckConnection): it fails as fast, and heals as the pool does.
                long ackStart = System.nanoTime();
                HttpResponse<String> refused = api.post(ACKS, ack(2), node);
                assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
                assertThat(Duration.ofNanos(System.nanoTime() - ackStart)).as("an ack while the database is down").isLessThan(FAST);
                HttpResponse<String> liveness = api.get("/actuator/health/liveness", null);
                assertThat(liveness.statusCode()).isEqualTo(200);
                assertThat(TestApi.json(liveness).get("status")).isEqualTo("UP");

                pg.start();
                long back = System.nanoTime();
                // The pool finds its connections dead and opens new ones: no restart of the api.
                for (String path : READS) {
                    awaitStatus(api, path, VIEWER, 200);
                }
                awaitStatus(api, "/actuator/health/readiness", null, 200);
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                        assertThat(api.post(ACKS, ack(2), node).statusCode()).as("an ack after the outage").isEqualTo(204));
                assertThat(new NodeStatusStore(ds).nodeStatus("shop", List.of("n1"))).singleElement()
                        .extracting(NodeStatus::running).isEqualTo(2L);
                System.out.printf("database back: every request served again after %d ms%n",
                        Duration.ofNanos(System.nanoTime() - back).toMillis());
            }
        }
    }

    private static final String VIEWER = TestApi.VIEWER.token();
    private static final String ACKS = "/api/v1/clusters/shop/nodes/n1/acks";

    private static String ack(long version) {
        return "[" + new NodeAck("shop", "n1", version, version, NodeAck.Status.APPLIED, null, 3, 40, "iptables", Instant.now()).toJson() + "]";
    }

    private static void awaitStatus(TestApi api, String path, String token, int status) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                assertThat(api.get(path, token).statusCode()).as(path + " 30 s after the database came back").isEqualTo(status));
    }
}
