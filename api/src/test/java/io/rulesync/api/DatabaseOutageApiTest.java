package io.rulesync.api;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.api.testing.TestNode;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.tiers.Tiers;
import io.rulesync.testsupport.PrivatePostgres;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
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

    private static final int FAST_SECONDS = (int) FAST.toSeconds();
    private static final List<String> READS = List.of(
            "/api/v1/clusters",
            "/api/v1/clusters/shop/versions",
            "/api/v1/clusters/shop/versions/latest/snapshot?node=n1",
            "/api/v1/clusters/shop/versions/latest/rules?node=n1",
            "/api/v1/clusters/shop/events",
            "/api/v1/clusters/shop/nodes",
            "/api/v1/audit");

    @Test
    void requestsFailFastReadinessFollowsTheDatabaseAndTheApiRecoversByItself() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.create()) {
            String url = pg.url("postgres");
            PGSimpleDataSource ds = withShop(url);
            try (TestApi api = TestApi.on(url, "postgres", "")) {
                String node = api.nodeToken("shop", "n1");
                for (String path : READS) {
                    assertThat(api.get(path).statusCode()).as(path).isEqualTo(200);
                }
                assertThat(api.get("/actuator/health/readiness", null).statusCode())
                        .isEqualTo(200);

                pg.stop();
                for (String path : READS) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = api.get(path);
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    System.out.printf(
                            "database down: GET %s answered %d in %d ms%n", path, r.statusCode(), took.toMillis());
                    assertProblem(r, 503, null, "reading the version store failed; retry later");
                    assertThat(took).as(path).isLessThan(FAST);
                }
                for (String probe : List.of("/actuator/health/readiness", "/actuator/health")) {
                    long start = System.nanoTime();
                    HttpResponse<String> r = api.get(probe, null);
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    System.out.printf(
                            "database down: GET %s answered %d %s in %d ms%n",
                            probe, r.statusCode(), r.body(), took.toMillis());
                    assertThat(r.statusCode()).as(probe).isEqualTo(503);
                    assertThat(TestApi.json(r).get("status")).isEqualTo("DOWN");
                    assertThat(took).as(probe).isLessThan(FAST);
                }
                // Acks go through a connection of their own (AckConnection): it fails as fast, and heals as the pool
                // does.
                long ackStart = System.nanoTime();
                HttpResponse<String> refused = api.post(ACKS, ack(2), node);
                assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
                assertThat(Duration.ofNanos(System.nanoTime() - ackStart))
                        .as("an ack while the database is down")
                        .isLessThan(FAST);
                HttpResponse<String> liveness = api.get("/actuator/health/liveness", null);
                assertThat(liveness.statusCode()).isEqualTo(200);
                assertThat(TestApi.json(liveness).get("status")).isEqualTo("UP");
                // A node stream resuming meanwhile cannot be parked (its cluster's versions cannot be read): it ends,
                // and
                // the node reconnects after its backoff, rather than waiting on a stream nothing will ever write to.
                try (TestNode stream =
                        new TestNode(NodeStream.channel(api.streamTarget(), null, false), "shop", "n1", node, 4)) {
                    stream.stream.send(new NodeFrame.Resume(1));
                    Status ended = stream.end(FAST_SECONDS);
                    assertThat(ended.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(ended.getDescription()).startsWith("reading the versions of cluster 'shop': ");
                }

                pg.start();
                long back = System.nanoTime();
                // The pool finds its connections dead and opens new ones: no restart of the api.
                for (String path : READS) {
                    awaitStatus(api, path, VIEWER, 200);
                }
                awaitStatus(api, "/actuator/health/readiness", null, 200);
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(200))
                        .untilAsserted(
                                () -> assertThat(api.post(ACKS, ack(2), node).statusCode())
                                        .as("an ack after the outage")
                                        .isEqualTo(204));
                assertThat(new NodeStatusStore(ds).nodeStatus("shop", List.of("n1")))
                        .singleElement()
                        .extracting(NodeStatus::running)
                        .isEqualTo(2L);
                System.out.printf(
                        "database back: every request served again after %d ms%n",
                        Duration.ofNanos(System.nanoTime() - back).toMillis());
            }
        }
    }

    /**
     * A database that stops answering in the middle of a query (dropped packets, a host that hangs, a failover): the
     * request in flight fails within seconds rather than waiting for TCP, a lock held elsewhere costs a request its lock
     * timeout, and once the server answers again everything is served without a restart.
     */
    @Test
    void aQueryInFlightWhenTheDatabaseFreezesFailsWithinSecondsAndTheApiRecovers() throws Exception {
        try (PrivatePostgres pg = PrivatePostgres.create()) {
            String url = pg.url("postgres");
            PGSimpleDataSource ds = withShop(url);
            try (TestApi api = TestApi.on(url, "postgres", "");
                    Connection locker = ds.getConnection()) {
                String node = api.nodeToken("shop", "n1");
                String versions = "/api/v1/clusters/shop/versions";
                assertThat(api.get(versions).statusCode()).isEqualTo(200);
                // The api's connections carry their limits to the server.
                try (Connection c = api.context().getBean(DataSource.class).getConnection();
                        Statement st = c.createStatement()) {
                    assertThat(show(st, "statement_timeout")).isEqualTo("5s");
                    assertThat(show(st, "lock_timeout")).isEqualTo("3s");
                    assertThat(show(st, "idle_in_transaction_session_timeout")).isEqualTo("10s");
                }

                // Another session holds the table: the api's query waits for its lock timeout, not for good.
                locker.setAutoCommit(false);
                try (Statement st = locker.createStatement()) {
                    st.execute("LOCK TABLE version IN ACCESS EXCLUSIVE MODE");
                }
                long start = System.nanoTime();
                HttpResponse<String> locked = api.get(versions);
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                System.out.printf(
                        "a table locked elsewhere: GET %s answered %d in %d ms%n",
                        versions, locked.statusCode(), took.toMillis());
                assertThat(locked.statusCode()).as(locked.body()).isEqualTo(503);
                assertThat(took).isBetween(Duration.ofSeconds(2), FAST.plusSeconds(1));

                // The same query, in flight (waiting on that lock) when the whole server freezes: the driver's socket
                // timeout ends it. Without one it would wait for TCP, which never gives up on an open connection.
                CompletableFuture<HttpResponse<String>> inFlight = CompletableFuture.supplyAsync(() -> {
                    try {
                        return api.get(versions);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(500);
                pg.freeze();
                long frozen = System.nanoTime();
                HttpResponse<String> cut = inFlight.get(30, TimeUnit.SECONDS);
                took = Duration.ofNanos(System.nanoTime() - frozen);
                System.out.printf(
                        "the database frozen mid-query: GET %s answered %d in %d ms%n",
                        versions, cut.statusCode(), took.toMillis());
                assertProblem(cut, 503, null, "reading the version store failed; retry later");
                assertThat(took).isLessThan(Duration.ofSeconds(12));
                // An ack meanwhile: refused as fast, and not stored (checked once the server answers again).
                start = System.nanoTime();
                assertThat(api.post(ACKS, ack(2), node).statusCode()).isEqualTo(503);
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(12));

                pg.thaw();
                locker.rollback();
                long back = System.nanoTime();
                assertThat(new NodeStatusStore(ds).nodeStatus("shop", List.of("n1")))
                        .as("the refused ack")
                        .isEmpty();
                awaitStatus(api, versions, VIEWER, 200);
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(200))
                        .untilAsserted(
                                () -> assertThat(api.post(ACKS, ack(2), node).statusCode())
                                        .as("an ack after the freeze")
                                        .isEqualTo(204));
                System.out.printf(
                        "database answering again: every request served after %d ms%n",
                        Duration.ofNanos(System.nanoTime() - back).toMillis());
            }
        }
    }

    /** The schema on the server at {@code url}, and cluster shop with two versions; a plain connection to it. */
    private static PGSimpleDataSource withShop(String url) throws Exception {
        Flyway.configure().dataSource(url, "postgres", "").load().migrate();
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser("postgres");
        StoredClusters.twoVersions(CompilerStores.on(ds), "shop");
        return ds;
    }

    private static String show(Statement st, String setting) throws SQLException {
        try (ResultSet rs = st.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static final String VIEWER = TestApi.VIEWER.token();
    private static final String ACKS = "/api/v1/clusters/shop/nodes/n1/acks";

    private static String ack(long version) {
        return "["
                + new NodeAck(
                                "shop",
                                "n1",
                                version,
                                version,
                                NodeAck.Status.APPLIED,
                                null,
                                3,
                                40,
                                "iptables",
                                Instant.now())
                        .toJson()
                + "]";
    }

    private static void awaitStatus(TestApi api, String path, String token, int status) {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(api.get(path, token).statusCode())
                        .as(path + " 30 s after the database came back")
                        .isEqualTo(status));
    }
}
