package io.rulesync.api.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.testing.NodeTokens;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.api.testing.TestNode;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.Json;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Every input crosses a boundary: the api, on a real PostgreSQL, as a node or an attacker holding some credential meets
 * it. Each refusal is checked for what the caller is told and for what is stored: nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class TrustApiTest {
    private static final NodeTokens SHOP = NodeTokens.es256("https://shop.example/issuer");
    private static final NodeTokens IMPOSTOR = NodeTokens.es256("https://shop.example/issuer");

    @TempDir
    static Path dir;

    private TestDatabase db;
    private TestApi api;
    private NodeStatusStore statuses;

    @BeforeAll
    void setUp() throws Exception {
        db = TestDatabase.create();
        CompilerStores store = CompilerStores.on(db.dataSource());
        StoredClusters.twoVersions(store, "shop");
        StoredClusters.twoVersions(store, "bank");
        SHOP.writeJwks(dir.resolve("shop.jwks.json"));
        Path issuers = Files.writeString(
                dir.resolve("issuers.txt"), "# cluster issuer keys\nshop " + SHOP.issuer() + " shop.jwks.json\n");
        api = TestApi.on(db.url(), db.user(), db.password(), Map.of("rulesync.api.node-issuers", issuers.toString()));
        statuses = new NodeStatusStore(db.dataSource());
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static NodeAck ack(String cluster, String node, long version, Instant at) {
        return new NodeAck(cluster, node, version, version, NodeAck.Status.APPLIED, null, 3, 12, "iptables", at);
    }

    private static String list(NodeAck... acks) {
        return "["
                + String.join(
                        ",", java.util.Arrays.stream(acks).map(NodeAck::toJson).toList()) + "]";
    }

    private NodeStatus status(String cluster, String node) {
        return statuses.nodeStatus(cluster, List.of(node)).stream().findFirst().orElse(null);
    }

    private static String acks(String cluster, String node) {
        return "/api/v1/clusters/" + cluster + "/nodes/" + node + "/acks";
    }

    @Test
    void aForgedFutureAckCannotFreezeANode() throws Exception {
        String token = api.nodeToken("shop", "n7");
        NodeAck forged = new NodeAck(
                "shop",
                "n7",
                1,
                1,
                NodeAck.Status.FAILED,
                "forged",
                1,
                1,
                "iptables",
                Instant.parse("9999-01-01T00:00:00Z"));
        assertThat(api.post(acks("shop", "n7"), list(forged), token).statusCode())
                .isEqualTo(204);
        // The node applies version 2, by a clock that is honest: that is what it runs now.
        Instant before = Instant.now().minusSeconds(1);
        assertThat(api.post(acks("shop", "n7"), list(ack("shop", "n7", 2, Instant.now())), token)
                        .statusCode())
                .isEqualTo(204);

        NodeStatus s = status("shop", "n7");
        assertThat(s.failing()).isFalse();
        assertThat(s.running()).isEqualTo(2);
        // What operators see: when the api received the ack, and, for display, what the node's clock said.
        JsonNode node = nodeJson("shop", "n7");
        assertThat(node.path("state").asString()).isNotEqualTo("failed");
        assertThat(node.path("running").asLong()).isEqualTo(2);
        assertThat(Instant.parse(node.path("lastAck").path("at").asString())).isAfter(before);
        assertThat(Instant.parse(node.path("lastAck").path("nodeAt").asString()))
                .isBefore(Instant.now().plusSeconds(1));
        // The forged failure's time is the api's, not the year 9999.
        assertThat(Instant.parse(node.path("lastError").path("at").asString()))
                .isBefore(Instant.now().plusSeconds(1));
    }

    private JsonNode nodeJson(String cluster, String node) throws Exception {
        HttpResponse<String> r = api.get("/api/v1/clusters/" + cluster + "/nodes");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        for (JsonNode n : Json.MAPPER.readTree(r.body()).path("nodes")) {
            if (n.path("node").asString().equals(node)) {
                return n;
            }
        }
        throw new AssertionError(node + " not in " + r.body());
    }

    @Test
    void aNodeSpeaksOnlyForItselfAndAClusterCredentialForNoNode() throws Exception {
        NodeAck forN8 = ack("shop", "n8", 2, Instant.now());
        HttpResponse<String> cross = api.post(acks("shop", "n8"), list(forN8), api.nodeToken("shop", "n9"));
        assertThat(cross.statusCode()).isEqualTo(403);
        assertThat(cross.body())
                .contains("is bound to node 'n9' of cluster 'shop'; it may not acknowledge for node 'n8'");
        HttpResponse<String> cluster =
                api.post(acks("bank", "n8"), list(ack("bank", "n8", 2, Instant.now())), TestApi.BANK.token());
        assertThat(cluster.statusCode()).isEqualTo(403);
        assertThat(cluster.body()).contains("is not bound to a node");
        assertThat(api.post(acks("shop", "n8"), list(forN8), TestApi.AGENT.token())
                        .statusCode())
                .isEqualTo(403);
        // A node's ServiceAccount token speaks for its node, and only there.
        assertThat(api.post(acks("shop", "n8"), list(forN8), SHOP.forNode("n9")).statusCode())
                .isEqualTo(403);
        assertThat(status("shop", "n8")).as("nothing stored for n8").isNull();
        assertThat(status("bank", "n8")).as("nothing stored for bank's n8").isNull();

        assertThat(api.post(acks("shop", "n8"), list(forN8), SHOP.forNode("n8")).statusCode())
                .isEqualTo(204);
        assertThat(status("shop", "n8").running()).isEqualTo(2);
    }

    @Test
    void aServiceAccountTokenIsVerifiedOfflineAndRefusedWhenItIsNotTheNodes() throws Exception {
        String path = acks("shop", "sa1");
        String body = list(ack("shop", "sa1", 2, Instant.now()));
        Instant now = Instant.now();
        String expired = SHOP.sign(SHOP.claims("sa1", now.minusSeconds(3600), now.minusSeconds(600))
                .build());
        String otherAudience = SHOP.sign(SHOP.claims("sa1", now, now.plusSeconds(600))
                .audience("kubernetes")
                .build());
        String otherAccount = SHOP.sign(SHOP.claims("sa1", now, now.plusSeconds(600))
                .subject("system:serviceaccount:default:default")
                .build());
        String noNode = SHOP.sign(SHOP.claims(null, now, now.plusSeconds(600)).build());
        String forged = IMPOSTOR.forNode("sa1"); // the right issuer's name, another key
        String tampered = SHOP.forNode("sa2")
                .replaceFirst("\\.[^.]+\\.", "." + SHOP.forNode("sa1").split("\\.")[1] + ".");
        for (String bad : List.of(expired, otherAudience, otherAccount, noNode, forged, tampered)) {
            HttpResponse<String> r = api.post(path, body, bad);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(401);
        }
        assertThat(status("shop", "sa1")).as("nothing stored").isNull();
        // A node of a cluster whose issuer is not configured is not known either.
        assertThat(api.post(acks("bank", "sa1"), list(ack("bank", "sa1", 2, now)), SHOP.forNode("sa1"))
                        .statusCode())
                .isEqualTo(403);

        // Its own, fresh token opens its stream, and its acks ride it.
        try (TestNode node = new TestNode(
                NodeStream.channel(api.streamTarget(), null, false), "shop", "sa1", SHOP.forNode("sa1"), 4)) {
            node.stream.send(new NodeFrame.Resume(1));
            assertThat(node.deltas().upTo()).isEqualTo(2);
            node.stream.send(new NodeFrame.Acks(List.of(ack("shop", "sa1", 2, Instant.now()))));
            await().atMost(Duration.ofSeconds(10)).until(() -> status("shop", "sa1") != null);
        }
        try (TestNode other = new TestNode(
                NodeStream.channel(api.streamTarget(), null, false), "shop", "sa2", SHOP.forNode("sa1"), 4)) {
            assertThat(other.end(20).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        }
    }

    @Test
    void aRevokedTokenIsRefusedWithinSecondsAndItsOpenStreamEnded() throws Exception {
        String token = api.nodeToken("shop", "n10");
        MeterRegistry meters = api.context().getBean(MeterRegistry.class);
        double revokedBefore = meters.get("rulesync.streams.revoked").counter().count();
        try (TestNode node =
                new TestNode(NodeStream.channel(api.streamTarget(), null, false), "shop", "n10", token, 4)) {
            node.stream.send(new NodeFrame.Resume(1));
            assertThat(node.deltas().upTo()).isEqualTo(2);
            // The operator removes the token's line; the api reads the file again on its own (every 2 s).
            Path file = Path.of(api.context().getEnvironment().getProperty("rulesync.api.tokens-file"));
            String hash = ApiTokens.hash(token);
            List<String> kept = Files.readAllLines(file).stream()
                    .filter(l -> !l.contains(hash))
                    .toList();
            Instant revoked = Instant.now();
            Files.write(file, kept);

            Status end = node.end(10);
            assertThat(end.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(Duration.between(revoked, Instant.now())).isLessThan(Duration.ofSeconds(5));
            assertThat(meters.get("rulesync.streams.revoked").counter().count()).isEqualTo(revokedBefore + 1);
        }
        assertThat(api.post(acks("shop", "n10"), list(ack("shop", "n10", 2, Instant.now())), token)
                        .statusCode())
                .isEqualTo(401);
        assertThat(status("shop", "n10")).as("nothing stored").isNull();
        // A file that no longer parses is not taken: every other credential keeps working.
        Path file = Path.of(api.context().getEnvironment().getProperty("rulesync.api.tokens-file"));
        List<String> good = Files.readAllLines(file);
        Files.writeString(file, "this is not a token line\n", java.nio.file.StandardOpenOption.APPEND);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> meters.get(Credentials.RELOAD_FAILURES).counter().count() >= 1);
        assertThat(api.get("/api/v1/clusters").statusCode()).isEqualTo(200);
        Files.write(file, good);
    }

    /** Every version a node may run was stored before it was served: an ack beyond the cluster's newest is refused. */
    @Test
    void anAckForAVersionTheClusterDoesNotHaveIsRefused() throws Exception {
        String token = api.nodeToken("shop", "n13");
        HttpResponse<String> r = api.post(acks("shop", "n13"), list(ack("shop", "n13", 99, Instant.now())), token);
        assertThat(r.statusCode()).isEqualTo(422);
        assertThat(r.body()).contains("body[0]: version 99 of cluster 'shop' does not exist; its newest is 2");
        assertThat(status("shop", "n13")).as("nothing stored").isNull();

        // On a stream the frame is dropped and counted; the stream stays, and the node's next true ack is stored.
        MeterRegistry meters = api.context().getBean(MeterRegistry.class);
        double refusedBefore =
                meters.get("rulesync.streams.acks.refused").counter().count();
        try (TestNode node =
                new TestNode(NodeStream.channel(api.streamTarget(), null, false), "shop", "n13", token, 4)) {
            node.stream.send(new NodeFrame.Resume(1));
            assertThat(node.deltas().upTo()).isEqualTo(2);
            node.stream.send(new NodeFrame.Acks(List.of(ack("shop", "n13", 99, Instant.now()))));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> meters.get("rulesync.streams.acks.refused")
                                    .counter()
                                    .count()
                            == refusedBefore + 1);
            node.stream.send(new NodeFrame.Acks(List.of(ack("shop", "n13", 2, Instant.now()))));
            await().atMost(Duration.ofSeconds(10)).until(() -> status("shop", "n13") != null);
        }
        assertThat(status("shop", "n13").running()).isEqualTo(2);
    }

    @Test
    void aMegabyteInAFieldIsRefusedByName() throws Exception {
        NodeAck small = new NodeAck("shop", "n11", 2, 1, NodeAck.Status.FAILED, "x", 1, 1, "iptables", Instant.now());
        String body = list(small).replace("\"error\":\"x\"", "\"error\":\"" + "x".repeat(1_000_000) + "\"");
        HttpResponse<String> r = api.post(acks("shop", "n11"), body, api.nodeToken("shop", "n11"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("body[0]: error: 1000000 characters, at most 4096");
        assertThat(status("shop", "n11")).as("nothing stored").isNull();
    }

    @Test
    void bodiesTooBigAreRefusedBeforeTheyAreReadAndMemoryStaysFlat() throws Exception {
        String token = api.nodeToken("shop", "n12");
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long heapBefore = rt.totalMemory() - rt.freeMemory();
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            List<Future<String>> answers = new ArrayList<>();
            Instant start = Instant.now();
            for (int i = 0; i < 20; i++) {
                answers.add(pool.submit(() -> statusLine(acks("shop", "n12"), token, 300L * 1024 * 1024, null)));
            }
            for (Future<String> a : answers) {
                assertThat(a.get()).startsWith("HTTP/1.1 413");
            }
            assertThat(Duration.between(start, Instant.now()))
                    .as("20 refusals at once")
                    .isLessThan(Duration.ofSeconds(1));
        } finally {
            pool.shutdownNow();
        }
        long heapAfter = rt.totalMemory() - rt.freeMemory();
        assertThat(heapAfter - heapBefore).as("heap growth, bytes").isLessThan(64L * 1024 * 1024);
        // A body without a length could be endless: refused too.
        assertThat(statusLine(acks("shop", "n12"), token, -1, "chunked")).startsWith("HTTP/1.1 411");
        assertThat(status("shop", "n12")).as("nothing stored").isNull();
    }

    /** Sends only the head of a POST declaring {@code length} bytes (or {@code transferEncoding}), and reads the status line. */
    private String statusLine(String path, String token, long length, String transferEncoding) throws Exception {
        URI base = URI.create(api.baseUrl());
        try (Socket s = new Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(10_000);
            String head = "POST " + path + " HTTP/1.1\r\nHost: " + base.getHost() + "\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/json\r\n"
                    + (transferEncoding == null
                            ? "Content-Length: " + length
                            : "Transfer-Encoding: " + transferEncoding)
                    + "\r\n\r\n";
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }

    @Test
    void writesAndFailedAuthenticationsAreRateLimited() throws Exception {
        try (TestApi limited = TestApi.on(
                db.url(),
                db.user(),
                db.password(),
                Map.of("rulesync.api.writes-per-second", 3, "rulesync.api.failed-authentications-per-minute", 5))) {
            String token = limited.nodeToken("shop", "n13");
            List<HttpResponse<String>> answers = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                answers.add(limited.post(acks("shop", "n13"), list(ack("shop", "n13", 2, Instant.now())), token));
            }
            HttpResponse<String> last = answers.get(answers.size() - 1);
            assertThat(answers).extracting(HttpResponse::statusCode).contains(204, 429);
            assertThat(last.statusCode()).isEqualTo(429);
            assertThat(last.headers().firstValue("Retry-After"))
                    .hasValueSatisfying(v -> assertThat(Long.parseLong(v)).isBetween(1L, 2L));
            assertThat(last.body()).contains("writes more often than the api takes");

            for (int i = 0; i < 5; i++) {
                assertThat(limited.get("/api/v1/clusters", "rs_guessed-" + i).statusCode())
                        .isEqualTo(401);
            }
            // The address has guessed enough: refused before its token is looked at, a valid one too.
            HttpResponse<String> guessing = limited.get("/api/v1/clusters", TestApi.VIEWER.token());
            assertThat(guessing.statusCode()).isEqualTo(429);
            assertThat(guessing.headers().firstValue("Retry-After")).isPresent();
            try (TestNode node =
                    new TestNode(NodeStream.channel(limited.streamTarget(), null, false), "shop", "n13", token, 1)) {
                Status refused = node.end(20);
                assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(refused.getDescription()).startsWith("too many failed authentications from this address");
            }
            MeterRegistry meters = limited.context().getBean(MeterRegistry.class);
            assertThat(meters.get(RateLimits.LIMITED)
                            .tag("kind", "write")
                            .counter()
                            .count())
                    .isGreaterThanOrEqualTo(1);
            assertThat(meters.get(RateLimits.LIMITED)
                            .tag("kind", "failed-authentication")
                            .counter()
                            .count())
                    .isGreaterThanOrEqualTo(1);
        }
    }
}
