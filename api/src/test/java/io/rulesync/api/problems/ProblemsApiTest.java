package io.rulesync.api.problems;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.manifest.Problem;
import io.rulesync.store.Batch;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;

/** The problems of a cluster over real HTTP, from what the compiler stored in real PostgreSQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class ProblemsApiTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop", "calm");
        CompilerStores store = api.store();
        // Written the way the compiler writes a batch: the sources' problems, and a record it refused. Also a
        // cluster whose every object was refused: no version, but known.
        store.batches()
                .commit(new Batch(
                        "fixture",
                        "events-shop",
                        0,
                        7,
                        9,
                        List.of(),
                        List.of(new Batch.DeadLetterRow(
                                8,
                                "shop",
                                "{\"v\":1,\"cluster\":\"shop\",\"type\":\"rename\"" + "x".repeat(1000) + "}",
                                "type: 'rename' is not upsert, ...")),
                        List.of(),
                        List.of(),
                        List.of(),
                        0,
                        List.of(
                                new Batch.ProblemRow(
                                        "shop",
                                        "manifests/shop/web.yaml",
                                        List.of(
                                                new Problem(
                                                        "manifests/shop/web.yaml (document 2)",
                                                        "Service shop/bad",
                                                        "spec.ports[0].port",
                                                        "0 is out of range (1-65535)"),
                                                new Problem(
                                                        "manifests/shop/web.yaml (document 2)",
                                                        "Service shop/bad",
                                                        "spec.clusterIP",
                                                        "'x' is not an IP address")),
                                        T),
                                new Batch.ProblemRow(
                                        "shop",
                                        "Node n9",
                                        List.of(new Problem(
                                                "",
                                                "Node n9",
                                                "status.addresses[0].address",
                                                "'127.0.0.1' is a loopback address")),
                                        T.plusSeconds(5)),
                                new Batch.ProblemRow(
                                        "broken",
                                        "manifests/broken/all.yaml",
                                        List.of(new Problem(
                                                "manifests/broken/all.yaml", "", "", "not valid YAML or JSON")),
                                        T))));
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void refusedObjectsWithFieldAndReasonAndTheNewestDeadLetters() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/shop/problems");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Map<?, ?> body = TestApi.json(r);
        assertThat(body.get("refusedObjects")).isEqualTo(2);
        List<?> problems = (List<?>) body.get("problems");
        assertThat(problems).hasSize(3);
        assertThat(map(problems.get(2)))
                .containsEntry("source", "manifests/shop/web.yaml")
                .containsEntry("location", "manifests/shop/web.yaml (document 2)")
                .containsEntry("object", "Service shop/bad")
                .containsEntry("field", "spec.clusterIP")
                .containsEntry("reason", "'x' is not an IP address")
                .containsEntry("reportedAt", T.toString());
        assertThat(map(problems.get(0)))
                .containsEntry("source", "Node n9")
                .containsEntry("reportedAt", T.plusSeconds(5).toString());
        assertThat(body.get("deadLetterCount")).isEqualTo(1);
        List<?> dead = (List<?>) body.get("deadLetters");
        assertThat(map(dead.get(0)))
                .containsEntry("offset", 8)
                .containsEntry("reason", "type: 'rename' is not upsert, ...")
                .containsEntry("topic", "events-shop");
        assertThat((String) ((Map<?, ?>) dead.get(0)).get("recordStart"))
                .hasSize(ProblemsController.PAYLOAD_CHARS)
                .startsWith("{\"v\":1,\"cluster\":\"shop\"");
    }

    @Test
    void aCalmClusterHasNoneAndAFullyRefusedOneIsStillKnown() throws Exception {
        Map<?, ?> calm = TestApi.json(api.get("/api/v1/clusters/calm/problems"));
        assertThat(calm.get("refusedObjects")).isEqualTo(0);
        assertThat((List<?>) calm.get("problems")).isEmpty();
        assertThat((List<?>) calm.get("deadLetters")).isEmpty();
        Map<?, ?> broken = TestApi.json(api.get("/api/v1/clusters/broken/problems"));
        assertThat((List<?>) broken.get("problems"))
                .singleElement()
                .satisfies(p -> assertThat(map(p))
                        .containsEntry("object", "")
                        .containsEntry("reason", "not valid YAML or JSON"));
        TestApi.assertProblem(api.get("/api/v1/clusters/nope/problems"), 404, "cluster", "'nope' is not known");
    }

    @Test
    void theClusterListCountsRefusedObjects() throws Exception {
        List<?> clusters = (List<?>) TestApi.json(api.get("/api/v1/clusters")).get("clusters");
        assertThat(clusters)
                .extracting(c -> ((Map<?, ?>) c).get("cluster") + "=" + ((Map<?, ?>) c).get("refusedObjects"))
                .containsExactly("calm=0", "shop=2");
    }

    @Test
    void viewersMayReadAgentsMayNot() throws Exception {
        assertThat(api.get("/api/v1/clusters/shop/problems", TestApi.AGENT.token())
                        .statusCode())
                .isEqualTo(403);
        assertThat(api.get("/api/v1/clusters/shop/problems", null).statusCode()).isEqualTo(401);
        assertThat(api.get("/api/v1/clusters/shop/problems", TestApi.OPERATOR.token())
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void anOperatorReplaysADeadLetterThroughTheOutbox() throws Exception {
        Map<?, ?> dead = map(((List<?>)
                        TestApi.json(api.get("/api/v1/clusters/shop/problems")).get("deadLetters"))
                .get(0));
        String path = "/api/v1/clusters/shop/dead-letters/" + dead.get("id") + "/replay";
        assertThat(api.post(path, "", TestApi.VIEWER.token()).statusCode()).isEqualTo(403);
        TestApi.assertProblem(
                api.post(
                        "/api/v1/clusters/calm/dead-letters/" + dead.get("id") + "/replay",
                        "",
                        TestApi.OPERATOR.token()),
                404,
                "id",
                "cluster 'calm' has no dead letter " + dead.get("id"));

        HttpResponse<String> r = api.post(path, "", TestApi.OPERATOR.token());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        assertThat(map(TestApi.json(r)))
                .containsEntry("cluster", "shop")
                .containsEntry("topic", "events-shop")
                .containsEntry("replayedBy", "otto");
        // The outbox relay publishes it to the events topic, where the compiler reads it again.
        assertThat(JdbcClient.create(api.database().dataSource())
                        .sql("SELECT topic || ' ' || record_key || ' ' || payload FROM outbox "
                                + "WHERE topic = 'events-shop'")
                        .query(String.class)
                        .single())
                .isEqualTo(
                        "events-shop shop {\"v\":1,\"cluster\":\"shop\",\"type\":\"rename\"" + "x".repeat(1000) + "}");
    }

    /** A JSON object, for assertions on its entries. */
    @SuppressWarnings("unchecked")
    private static Map<Object, Object> map(Object json) {
        return (Map<Object, Object>) json;
    }
}
