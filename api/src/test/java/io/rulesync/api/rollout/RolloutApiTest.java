package io.rulesync.api.rollout;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Staged rollout over real HTTP and PostgreSQL: a policy of a canary (n1) then the rest (n2); versions stored as the
 * compiler stores them; the nodes' side played by this test through the agents' own endpoints (deltas, snapshots, acks).
 * The whole path with real agents is RolloutEndToEndTest's.
 */
@RequiresPostgres
class RolloutApiTest {
    private static final String AGENT = TestApi.AGENT.token();
    private static final String OPERATOR = TestApi.OPERATOR.token();
    private static final String POLICY = """
            {"policy": {"waves": [{"name": "canary", "nodes": ["n1"], "bake": "2s"}, {"name": "rest", "percent": 100}],
                        "failWhen": {"ackTimeout": "1m"}}, "reason": "canary first"}""";
    private TestDatabase db;
    private TestApi api;
    private ClusterHead.Step shopHead;
    private long offset = 7;

    @BeforeEach
    void start() throws Exception {
        db = TestDatabase.create();
        shopHead = StoredClusters.twoVersions(CompilerStores.on(db.dataSource()), "shop");
        api = TestApi.on(db.url(), db.user(), db.password());
    }

    @AfterEach
    void stop() throws Exception {
        api.close();
        db.close();
    }

    @Test
    void aVersionReachesTheCanaryFirstAndTheRestOnceTheCanaryAckedAndBaked() throws Exception {
        assertProblem(
                api.put("/api/v1/clusters/shop/rollout/policy", POLICY, TestApi.VIEWER.token()),
                403,
                null,
                "needs operator");
        HttpResponse<String> set = api.put("/api/v1/clusters/shop/rollout/policy", POLICY, OPERATOR);
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(rollout()).containsEntry("state", "complete").containsEntry("version", 2);

        newVersion("10.244.1.9"); // version 3
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "rolling".equals(rollout().get("state")));
        assertThat(rollout())
                .containsEntry("version", 3)
                .containsEntry("stable", 2)
                .containsEntry("wave", "canary");
        assertThat(deltas("n1", 2)).as("the canary is served version 3").contains("\"target\":3");
        assertThat(deltas("n2", 2)).as("the rest are not").isEmpty();
        assertThat(snapshotVersion("n1")).isEqualTo("\"v3\"");
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");

        // A restarted api holds n2 back from its very first request, before its own first tick.
        api.close();
        api = TestApi.on(db.url(), db.user(), db.password());
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");
        assertThat(deltas("n2", 2)).isEmpty();
        assertThat(deltas("n1", 2)).contains("\"target\":3");

        // n2 waits for its next version; it comes when the canary has acked and baked.
        CompletableFuture<HttpResponse<String>> parked = HttpClient.newHttpClient()
                .sendAsync(
                        HttpRequest.newBuilder(URI.create(
                                        api.baseUrl() + "/api/v1/clusters/shop/deltas?after=2&node=n2&wait=30"))
                                .header("Authorization", "Bearer " + AGENT)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        ack("n1", 3, null);
        HttpResponse<String> released = parked.get(20, TimeUnit.SECONDS);
        assertThat(released.body()).contains("\"target\":3");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "rest".equals(rollout().get("wave")));
        ack("n2", 3, null);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "complete".equals(rollout().get("state")));
        assertThat(events())
                .containsSubsequence("settled", "started", "wave-opened", "baked", "wave-opened", "baked", "completed");
    }

    @Test
    void anOperatorsRollbackSupersedesAVersionStillRollingOutAndNoNodeAppliesThatOnTheWay() throws Exception {
        api.put("/api/v1/clusters/shop/rollout/policy", POLICY.replace("\"2s\"", "\"10m\""), OPERATOR);
        newVersion("10.244.1.9"); // 3: on the canary, baking for ten minutes
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "rolling".equals(rollout().get("state")));
        ack("n1", 3, null);
        newVersion("10.244.1.10"); // 4: an ordinary change waits for 3
        Thread.sleep(1500); // more than a tick
        assertThat(rollout()).containsEntry("version", 3).containsEntry("state", "rolling");

        // The operator rolls back to 2. No compiler runs here: the action is stored done with version 5, as the
        // compiler would.
        HttpResponse<String> asked =
                api.post("/api/v1/clusters/shop/rollback", "{\"toVersion\": 2, \"reason\": \"3 is bad\"}", OPERATOR);
        long action = ((Number) json(asked).get("id")).longValue();
        newVersion("10.244.1.2"); // 5
        JdbcClient.create(db.dataSource())
                .sql("UPDATE operator_action SET status = 'done', result_version = 5, completed_at = now() "
                        + "WHERE id = ?")
                .param(action)
                .update();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Integer.valueOf(5).equals(rollout().get("version")));
        assertThat(rollout())
                .containsEntry("state", "rolling")
                .containsEntry("stable", 2)
                .containsEntry("wave", "canary");
        assertThat(events()).containsSubsequence("started", "wave-opened", "superseded", "started", "wave-opened");
        assertThat((String) ((Map<?, ?>) ((List<?>) rollout().get("log")).get(2)).get("detail"))
                .startsWith(
                        "by version 5: version 5 is a rollback: it supersedes version 3, which was still rolling out");
        // The canary goes from 3 to 5 by deltas; the rest never had 3 and must not apply it on the way: a snapshot.
        assertThat(deltas("n1", 3)).contains("\"target\":5");
        assertThat(api.get("/api/v1/clusters/shop/deltas?after=2&node=n1&wait=0", AGENT)
                        .statusCode())
                .isEqualTo(410);
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");
        ack("n1", 5, null);
        HttpResponse<String> promoted =
                api.post("/api/v1/clusters/shop/rollout/promote", "{\"reason\": \"rollback is fine\"}", OPERATOR);
        assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
        assertThat(api.get("/api/v1/clusters/shop/deltas?after=2&node=n2&wait=0", AGENT)
                        .statusCode())
                .as("2 to 5 crosses 3")
                .isEqualTo(410);
        assertThat(snapshotVersion("n2")).isEqualTo("\"v5\"");
    }

    @Test
    void aVersionTheCanaryFailsHaltsThereAndAFixSkipsIt() throws Exception {
        api.put("/api/v1/clusters/shop/rollout/policy", POLICY, OPERATOR);
        newVersion("10.244.1.9"); // 3
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "rolling".equals(rollout().get("state")));
        ack("n1", 3, "iptables-restore: line 3 failed");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "halted".equals(rollout().get("state")));
        assertThat((String) rollout().get("cause"))
                .isEqualTo("1 node failed version 3: n1 (iptables-restore: line 3 failed)");
        assertThat(deltas("n1", 2)).as("the canary wave keeps it").contains("\"target\":3");
        assertThat(deltas("n2", 2)).as("no node of the next wave is served it").isEmpty();
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");
        assertThat(events()).contains("halted");
        // Everywhere an operator looks: the clusters overview, the version's history, the audit, the metrics.
        Map<String, Object> shop =
                map(((List<?>) json(api.get("/api/v1/clusters")).get("clusters")).get(0));
        assertThat(map(shop.get("rollout")))
                .containsEntry("state", "halted")
                .containsEntry("version", 3)
                .containsEntry("details", "/api/v1/clusters/shop/rollout");
        List<?> steps =
                (List<?>) json(api.get("/api/v1/clusters/shop/versions/3")).get("rollout");
        assertThat(field(steps, "event")).containsExactly("started", "wave-opened", "halted");
        List<?> audited = (List<?>) json(api.get("/api/v1/audit?cluster=shop")).get("rolloutSteps");
        assertThat(map(audited.get(0)))
                .containsEntry("event", "halted")
                .containsEntry("actor", "rollout")
                .containsEntry("detail", "1 node failed version 3: n1 (iptables-restore: line 3 failed)");
        assertThat(api.get("/actuator/prometheus").body()).contains("rulesync_rollout_halted_total 1.0");

        newVersion("10.244.1.10"); // 4: the fix
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Integer.valueOf(4).equals(rollout().get("version")));
        assertThat(rollout()).containsEntry("state", "rolling").containsEntry("stable", 2);
        // A node that joins now, in the second wave, with version 5 (which waits for 4): neither the version the rest
        // keep
        // (2) nor the one rolling out knows it, so it gets the newest rather than nothing.
        shopHead = StoredClusters.next(
                api.store(),
                "shop",
                shopHead,
                offset++,
                List.of(Fixtures.upsert("shop", Fixtures.node("n3", "10.1.0.3")))); // 5
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Integer.valueOf(4).equals(rollout().get("version")));
        assertThat(Waves.waveOf(
                        RolloutPolicy.fromJson(
                                POLICY.substring(POLICY.indexOf(':') + 1, POLICY.indexOf(", \"reason\""))),
                        "shop",
                        "n3",
                        "",
                        Map.of()))
                .isEqualTo(1);
        assertThat(snapshotVersion("n3")).isEqualTo("\"v5\"");
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");
        // The canary runs 2 (its apply of 3 failed): to reach 4 it must not apply 3 on the way, so it loads a snapshot.
        HttpResponse<String> past = api.get("/api/v1/clusters/shop/deltas?after=2&node=n1&wait=0", AGENT);
        assertProblem(past, 410, "after", "version 3 was halted by the cluster's rollout");
        assertThat(snapshotVersion("n1")).isEqualTo("\"v4\"");
        assertThat(snapshotVersion("n2")).isEqualTo("\"v2\"");
    }

    @Test
    void operatorsPausePromoteAndAbortAndEachStepIsLogged() throws Exception {
        api.put("/api/v1/clusters/shop/rollout/policy", POLICY.replace("2s", "1h"), OPERATOR);
        assertProblem(
                api.post("/api/v1/clusters/shop/rollout/promote", "{\"reason\": \"go\"}", OPERATOR),
                409,
                "cluster",
                "version 2 is complete; only a rolling or paused rollout can be promoted");
        newVersion("10.244.1.9"); // 3
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "rolling".equals(rollout().get("state")));
        assertThat(((Number) rollout().get("bakeLeftSeconds")).longValue()).isGreaterThan(3500);
        assertThat(api.post("/api/v1/clusters/shop/rollout/pause", "{\"reason\": \"watching the canary\"}", OPERATOR)
                        .statusCode())
                .isEqualTo(200);
        assertThat(rollout())
                .containsEntry("state", "paused")
                .containsEntry("cause", "paused by otto: watching the canary");
        HttpResponse<String> promoted =
                api.post("/api/v1/clusters/shop/rollout/promote", "{\"reason\": \"canary looks good\"}", OPERATOR);
        assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
        assertThat(json(promoted)).containsEntry("state", "rolling").containsEntry("wave", "rest");
        assertThat(deltas("n2", 2)).contains("\"target\":3");
        assertProblem(api.post("/api/v1/clusters/shop/rollout/abort", "{}", OPERATOR), 400, "reason", "reason: ");
        assertProblem(
                api.post("/api/v1/clusters/shop/rollout/resume", "{\"reason\": \"r\"}", OPERATOR),
                400,
                "step",
                "'resume' is not promote, pause or abort");
        assertProblem(
                api.post("/api/v1/clusters/shop/rollout/abort", "{\"reason\": \"r\"}", TestApi.VIEWER.token()),
                403,
                null,
                "needs operator");
        assertThat(api.post("/api/v1/clusters/shop/rollout/abort", "{\"reason\": \"enough\"}", OPERATOR)
                        .statusCode())
                .isEqualTo(200);
        assertThat(rollout()).containsEntry("state", "halted").containsEntry("cause", "aborted by otto: enough");
        assertThat(events()).containsSubsequence("paused", "promoted", "wave-opened", "aborted");

        // A policy changed mid-rollout to fewer waves than were opened: its last wave is open, and the rollout goes on.
        newVersion("10.244.1.11"); // 4
        await().atMost(Duration.ofSeconds(10))
                .until(() -> Integer.valueOf(4).equals(rollout().get("version")));
        api.post("/api/v1/clusters/shop/rollout/promote", "{\"reason\": \"to the rest\"}", OPERATOR);
        assertThat(api.put(
                                "/api/v1/clusters/shop/rollout/policy",
                                "{\"policy\": {\"waves\": [{\"percent\": 100}]}, \"reason\": \"one " + "wave\"}",
                                OPERATOR)
                        .statusCode())
                .isEqualTo(200);
        assertThat(rollout()).containsEntry("wave", "wave-1");
        ack("n1", 4, null);
        ack("n2", 4, null);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "complete".equals(rollout().get("state")));

        HttpResponse<String> bad = api.put(
                "/api/v1/clusters/shop/rollout/policy",
                "{\"policy\": {\"waves\": [{\"percent\": 0}]}, " + "\"reason\": \"r\"}",
                OPERATOR);
        assertProblem(bad, 400, "policy", "policy.waves[0].percent: '0' is not a whole number 1-100");
        // Removed: every node gets the head again.
        assertThat(api.put(
                                "/api/v1/clusters/shop/rollout/policy",
                                "{\"policy\": null, \"reason\": \"done with waves\"}",
                                OPERATOR)
                        .statusCode())
                .isEqualTo(200);
        assertThat(rollout()).containsEntry("state", "none");
        newVersion("10.244.1.10"); // 5
        HttpResponse<String> all =
                api.get("/api/v1/clusters/shop/deltas?after=4&node=n2&wait=20", AGENT); // woken when the api sees 5
        assertThat(all.body()).contains("\"target\":5");
    }

    @Test
    void aFleetFilesPolicyIsAppliedAtStartAndAgainUnchangedAfterARestart() throws Exception {
        Path fleet = Files.createTempFile("fleet", ".yaml");
        try {
            Files.writeString(fleet, """
                    clusters:
                      - id: shop
                        manifests: shop
                        rollout:
                          waves: [{name: canary, nodes: [n1], bake: 5s}, {name: rest, percent: 100}]
                    """);
            for (int start = 0; start < 2; start++) {
                try (TestApi withFile = TestApi.on(
                        db.url(), db.user(), db.password(), Map.of("rulesync.api.fleet", fleet.toString()))) {
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> "complete"
                                    .equals(json(withFile.get("/api/v1/clusters/shop/rollout"))
                                            .get("state")));
                    Map<String, Object> r = json(withFile.get("/api/v1/clusters/shop/rollout"));
                    assertThat(r)
                            .containsEntry("policySetBy", fleet.getFileName().toString());
                    // The second start finds the same policy stored: nothing is set again, nothing logged.
                    assertThat(field((List<?>) r.get("log"), "event")).containsExactly("settled", "policy-set");
                }
            }
            Files.writeString(fleet, "clusters:\n  - id: shop\n    rollout: {waves: [{name: canary, percent: 0}]}\n");
            assertThatThrownBy(() -> TestApi.on(
                            db.url(), db.user(), db.password(), Map.of("rulesync.api.fleet", fleet.toString())))
                    .rootCause()
                    .hasMessage(fleet.getFileName()
                            + ": cluster shop: rollout.waves[0].percent: '0' is not a whole number 1-100");
        } finally {
            Files.delete(fleet);
        }
    }

    /** The next version of shop, as the compiler would store it: n1's endpoints of {@code web} become {@code ip}. */
    private void newVersion(String ip) throws Exception {
        shopHead = StoredClusters.next(api.store(), "shop", shopHead, offset++, ip);
    }

    private Map<String, Object> rollout() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/shop/rollout");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json(r);
    }

    private static Map<String, Object> json(HttpResponse<String> r) {
        return map(TestApi.json(r));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    /** Each element's {@code key}. */
    private static List<Object> field(List<?> maps, String key) {
        return maps.stream().map(m -> map(m).get(key)).toList();
    }

    private List<Object> events() throws Exception {
        List<Object> oldestFirst = new ArrayList<>(((List<?>) rollout().get("log"))
                .stream().map(e -> ((Map<?, ?>) e).get("event")).toList());
        Collections.reverse(oldestFirst);
        return oldestFirst;
    }

    private String deltas(String node, long after) throws Exception {
        HttpResponse<String> r =
                api.get("/api/v1/clusters/shop/deltas?after=" + after + "&node=" + node + "&wait=0", AGENT);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private String snapshotVersion(String node) throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/shop/versions/latest/snapshot?node=" + node, AGENT);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        // The entity tag is "v<version>-<lineage>": the version is what the rollout decides.
        return r.headers().firstValue("ETag").orElseThrow().replaceAll("-[0-9a-f]{32}\"$", "\"");
    }

    private void ack(String node, long version, String error) throws Exception {
        NodeAck a = error == null
                ? new NodeAck(
                        "shop", node, version, version, NodeAck.Status.APPLIED, null, 5, 40, "iptables", Instant.now())
                : new NodeAck(
                        "shop",
                        node,
                        version,
                        version - 1,
                        NodeAck.Status.FAILED,
                        error,
                        5,
                        0,
                        "iptables",
                        Instant.now());
        HttpResponse<String> r = api.post(
                "/api/v1/clusters/shop/nodes/" + node + "/acks", "[" + a.toJson() + "]", api.nodeToken("shop", node));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    }
}
