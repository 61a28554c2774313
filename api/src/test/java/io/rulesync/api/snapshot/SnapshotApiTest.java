package io.rulesync.api.snapshot;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.testing.needs.RequiresPostgres;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The snapshot endpoint over real HTTP, on versions stored in a real PostgreSQL the way the compiler stores them. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class SnapshotApiTest {
    private static final String CLUSTER = "shop";
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions(CLUSTER);
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    /** As a node agent asks: with an agent token. */
    private HttpResponse<String> get(String path) throws Exception {
        return api.get(path, TestApi.AGENT.token());
    }

    private static String contentType(HttpResponse<String> r) {
        return r.headers().firstValue("Content-Type").orElse("");
    }

    /** An agent token bound to node n1 of shop reads that node's snapshots and nothing else: 403 names why. */
    @Test
    void aBoundAgentTokenReadsOnlyItsOwnNodesRules() throws Exception {
        String n1 = TestApi.SHOP_N1.token();
        assertThat(api.get("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", n1)
                        .statusCode())
                .isEqualTo(200);
        TestApi.assertProblem(
                api.get("/api/v1/clusters/shop/versions/latest/snapshot?node=n2", n1),
                403,
                null,
                "token 'shop-n1' is bound to node 'n1' of cluster 'shop'; it may not read the rules of node 'n2'");
        // Another cluster, whether it exists or not: the answer says nothing about it.
        TestApi.assertProblem(
                api.get("/api/v1/clusters/bank/versions/latest/snapshot?node=n1", n1),
                403,
                null,
                "token 'shop-n1' is bound to cluster 'shop'; it may not read cluster 'bank'");
        // The path the controllers see is the one checked: dot segments and encoded slashes do not reach past it.
        assertThat(api.raw("GET", "/api/v1/clusters/shop/../bank/versions/latest/snapshot?node=n1", n1)
                        .status())
                .isIn(400, 403, 404);
        assertThat(api.raw("GET", "/api/v1/clusters/shop%2F..%2Fbank/versions/latest/snapshot?node=n1", n1)
                        .status())
                .isIn(400, 403);
        // A viewer's reads are the viewer's: an agent token, bound or not, reads snapshots only.
        assertThat(api.get("/api/v1/clusters/shop/versions", n1).statusCode()).isEqualTo(403);
    }

    @Test
    void eachVersionGivesTheNodesOwnRulesAsStored() throws Exception {
        assertThat(api.store().history().head(CLUSTER)).isEqualTo(2);
        for (long v = 1; v <= 2; v++) {
            for (String node : new String[] {"n1", "n2"}) {
                HttpResponse<String> r =
                        get("/api/v1/clusters/" + CLUSTER + "/versions/" + v + "/snapshot?node=" + node);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(contentType(r)).startsWith("application/json");
                RulesSnapshot s = RulesSnapshot.fromJson(r.body());
                assertThat(s.cluster()).isEqualTo(CLUSTER);
                assertThat(s.version()).isEqualTo(v);
                assertThat(s.createdAt())
                        .isEqualTo(api.store()
                                .history()
                                .version(CLUSTER, v)
                                .orElseThrow()
                                .createdAt());
                assertThat(s.rules().nodes()).containsOnlyKeys(node);
                for (IpFamily family : IpFamily.values()) {
                    assertThat(s.rules().ruleSet(node, family))
                            .isEqualTo(api.store().history().rules(CLUSTER, v).ruleSet(node, family));
                }
            }
        }
        // The two nodes really differ (internalTrafficPolicy: Local), and so do the versions.
        String n1 = RulesSnapshot.fromJson(
                        get("/api/v1/clusters/shop/versions/1/snapshot?node=n1").body())
                .rules()
                .ruleSet("n1", IpFamily.IPV4)
                .orElseThrow()
                .render();
        String n2 = RulesSnapshot.fromJson(
                        get("/api/v1/clusters/shop/versions/1/snapshot?node=n2").body())
                .rules()
                .ruleSet("n2", IpFamily.IPV4)
                .orElseThrow()
                .render();
        assertThat(n1).contains("10.244.1.2:8080");
        assertThat(n2).doesNotContain("10.244.1.2:8080");
        String n1v2 = RulesSnapshot.fromJson(
                        get("/api/v1/clusters/shop/versions/2/snapshot?node=n1").body())
                .rules()
                .ruleSet("n1", IpFamily.IPV4)
                .orElseThrow()
                .render();
        assertThat(n1v2).contains("10.244.1.3:8080").doesNotContain("10.244.1.2:8080");
    }

    @Test
    void latestIsTheHead() throws Exception {
        HttpResponse<String> latest = get("/api/v1/clusters/shop/versions/latest/snapshot?node=n2");
        assertThat(latest.statusCode()).isEqualTo(200);
        RulesSnapshot s = RulesSnapshot.fromJson(latest.body());
        assertThat(s.version()).isEqualTo(api.store().history().head(CLUSTER)).isEqualTo(2);
        assertThat(latest.body())
                .isEqualTo(
                        get("/api/v1/clusters/shop/versions/2/snapshot?node=n2").body());
    }

    /**
     * What an agent gets: gzip when it asks for it (the same JSON, inflated), the version and its lineage as the entity tag, and 304
     * when it already runs the version it would get.
     */
    @Test
    void agentsGetGzipAndNothingForTheVersionTheyRun() throws Exception {
        io.micrometer.core.instrument.MeterRegistry meters =
                api.context().getBean(io.micrometer.core.instrument.MeterRegistry.class);
        double gzipBefore = meters.get("rulesync.snapshot.bytes")
                .tag("encoding", "gzip")
                .summary()
                .totalAmount();
        long notModifiedBefore = meters.get("rulesync.snapshot.bytes")
                .tag("encoding", "none")
                .summary()
                .count();
        HttpResponse<byte[]> gzip =
                bytes("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "Accept-Encoding", "gzip");
        assertThat(gzip.statusCode()).isEqualTo(200);
        assertThat(gzip.headers().firstValue("Content-Encoding")).contains("gzip");
        String lineage = api.store().history().lineage(CLUSTER, 2).orElseThrow();
        String etag = Snapshots.etag(2, lineage);
        assertThat(gzip.headers().firstValue("ETag"))
                .contains("\"v2-" + lineage + "\"")
                .contains(etag);
        String plain =
                get("/api/v1/clusters/shop/versions/latest/snapshot?node=n1").body();
        String inflated;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gzip.body()))) {
            inflated = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(inflated).isEqualTo(plain);
        assertThat(RulesSnapshot.fromJson(new ByteArrayInputStream(plain.getBytes(StandardCharsets.UTF_8))))
                .isEqualTo(RulesSnapshot.fromJson(plain));
        // The same rules as the model's own form of the node's snapshot (fragments grouped by variant, not sorted).
        RulesSnapshot model = new RulesSnapshot(
                CLUSTER,
                2,
                api.store().history().version(CLUSTER, 2).orElseThrow().createdAt(),
                api.store().history().rules(CLUSTER, 2).forNode("n1"),
                lineage);
        assertThat(RulesSnapshot.fromJson(plain)).isEqualTo(RulesSnapshot.fromJson(model.toJson()));
        assertThat(gzip.body().length).isLessThan(plain.length() / 2);

        HttpResponse<byte[]> same =
                bytes("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "If-None-Match", etag);
        assertThat(same.statusCode()).isEqualTo(304);
        assertThat(same.body()).isEmpty();
        // What a start-up storm costs the network is counted: the bytes sent gzip, and the 304s.
        assertThat(meters.get("rulesync.snapshot.bytes")
                                .tag("encoding", "gzip")
                                .summary()
                                .totalAmount()
                        - gzipBefore)
                .isEqualTo(gzip.body().length);
        assertThat(meters.get("rulesync.snapshot.bytes")
                                .tag("encoding", "none")
                                .summary()
                                .count()
                        - notModifiedBefore)
                .isEqualTo(1);
        assertThat(bytes("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "If-None-Match", "\"v1\"")
                        .statusCode())
                .isEqualTo(200);
        // The number alone, or with another lineage (a node of a history lost to a restore), is not the version.
        assertThat(bytes("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "If-None-Match", "\"v2\"")
                        .statusCode())
                .isEqualTo(200);
        assertThat(bytes(
                                "/api/v1/clusters/shop/versions/latest/snapshot?node=n1",
                                "If-None-Match",
                                Snapshots.etag(2, "0123456789abcdef".repeat(2)))
                        .statusCode())
                .isEqualTo(200);
        assertThat(bytes("/api/v1/clusters/shop/versions/latest/snapshot?node=n1", "Accept-Encoding", "gzip;q=0")
                        .headers()
                        .firstValue("Content-Encoding"))
                .isEmpty();
    }

    private HttpResponse<byte[]> bytes(String path, String header, String value) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + api.context().getEnvironment().getProperty("local.server.port") + path))
                .header("Authorization", "Bearer " + TestApi.AGENT.token())
                .header(header, value)
                .GET()
                .build();
        return HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void unknownClusterVersionOrNodeIs404NamingWhich() throws Exception {
        assertProblem(
                get("/api/v1/clusters/nope/versions/1/snapshot?node=n1"),
                404,
                "cluster",
                "cluster: 'nope' is not known");
        assertProblem(get("/api/v1/clusters/nope/versions/latest/snapshot?node=n1"), 404, "cluster", "cluster: 'nope'");
        assertProblem(
                get("/api/v1/clusters/shop/versions/3/snapshot?node=n1"),
                404,
                "version",
                "version: cluster 'shop' has no version 3 (its versions are 1-2)");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/snapshot?node=n9"),
                404,
                "node",
                "node: 'n9' is not a node of cluster 'shop' at version 2");
    }

    @Test
    void badVersionOrNodeIs400NamingTheParameter() throws Exception {
        for (String v : new String[] {"abc", "0", "-1", "1.5", "99999999999999999999"}) {
            assertProblem(
                    get("/api/v1/clusters/shop/versions/" + v + "/snapshot?node=n1"),
                    400,
                    "version",
                    "version: '" + v + "' is not a version number");
        }
        assertProblem(
                get("/api/v1/clusters/shop/versions/1/snapshot?node=Bad_Node"),
                400,
                "node",
                "node: 'Bad_Node' is not a DNS-1123 subdomain");
        assertProblem(
                get("/api/v1/clusters/shop/versions/1/snapshot"),
                400,
                "node",
                "node: the query parameter ?node=NAME is required");
        assertProblem(get("/api/v1/clusters/shop/versions/1/snapshot?node="), 400, "node", "node:");
    }

    @Test
    void otherErrorsAreProblemsToo() throws Exception {
        HttpResponse<String> r = api.get("/api/v1/no-such-thing");
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(contentType(r)).startsWith("application/problem+json");
        HttpResponse<String> post =
                api.post("/api/v1/clusters/shop/versions/1/snapshot?node=n1", null, TestApi.OPERATOR.token());
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(contentType(post)).startsWith("application/problem+json");
    }
}
