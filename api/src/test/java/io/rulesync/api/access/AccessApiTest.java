package io.rulesync.api.access;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rulesync.api.testing.TestApi;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

/** Tokens and roles over real HTTP: 401 without a known token, 403 with the wrong role, and what each role reaches. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class AccessApiTest {
    private static final List<String> READS = List.of(
            "/api/v1/clusters",
            "/api/v1/clusters/shop/versions",
            "/api/v1/clusters/shop/versions/2",
            "/api/v1/clusters/shop/versions/2/rules?node=n1",
            "/api/v1/clusters/shop/versions/2/diff",
            "/api/v1/clusters/shop/events",
            "/api/v1/clusters/shop/nodes",
            "/api/v1/audit",
            "/v3/api-docs",
            "/actuator/prometheus");
    private static final String SNAPSHOT = "/api/v1/clusters/shop/versions/latest/snapshot?node=n1";
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void everyEndpointNeedsAKnownToken() throws Exception {
        for (String path : concat(READS, SNAPSHOT)) {
            HttpResponse<String> none = api.get(path, null);
            assertProblem(none, 401, null, "this request needs 'Authorization: Bearer TOKEN'");
            assertThat(none.headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"rulesync\"");
            assertProblem(api.get(path, "rs_not-a-token"), 401, null, "the bearer token is not one the api knows");
        }
        assertProblem(
                api.post("/api/v1/clusters/shop/rollback", "{\"toVersion\":1,\"reason\":\"r\"}", null),
                401,
                null,
                "needs");
        // A known token sent some other way than as a bearer token does not count.
        assertThat(api.get("/api/v1/clusters?access_token=" + TestApi.VIEWER.token(), null)
                        .statusCode())
                .isEqualTo(401);
    }

    @Test
    void theDashboardsPageIsOpenItsDataIsNotAndWhoamiNamesTheToken() throws Exception {
        for (String path : List.of("/", "/index.html", "/ui/app.js", "/ui/style.css")) {
            HttpResponse<String> page = api.get(path, null);
            assertThat(page.statusCode()).as(path).isEqualTo(200);
            // Nothing in what anyone may fetch comes from the database or the tokens.
            assertThat(page.body())
                    .as(path)
                    .doesNotContain(TestApi.VIEWER.token(), TestApi.OPERATOR.token(), "10.244.1.3");
        }
        assertThat(api.get("/", null).body()).contains("<script type=\"module\" src=\"/ui/app.js\">");
        assertProblem(api.get("/api/v1/whoami", null), 401, null, "needs");
        Map<?, ?> viewer = TestApi.json(api.get("/api/v1/whoami", TestApi.VIEWER.token()));
        assertThat(viewer.get("name")).isEqualTo("vera");
        assertThat(viewer.get("role")).isEqualTo("viewer");
        assertThat(TestApi.json(api.get("/api/v1/whoami", TestApi.OPERATOR.token()))
                        .get("role"))
                .isEqualTo("operator");
        assertProblem(api.get("/api/v1/whoami", TestApi.AGENT.token()), 403, null, "needs operator or viewer");
        // Only the page and its assets are open: anything else under / still needs a token.
        assertThat(api.get("/ui-not/app.js", null).statusCode()).isEqualTo(401);
        assertThat(api.post("/", "{}", null).statusCode()).isEqualTo(401);
    }

    @Test
    void aViewerReadsEverythingButMayNotRollBack() throws Exception {
        for (String path : concat(READS, SNAPSHOT)) {
            assertThat(api.get(path, TestApi.VIEWER.token()).statusCode())
                    .as(path)
                    .isEqualTo(200);
        }
        for (String action : List.of("rollback", "resume")) {
            assertProblem(
                    api.post(
                            "/api/v1/clusters/shop/" + action,
                            "{\"toVersion\":1,\"reason\":\"r\"}",
                            TestApi.VIEWER.token()),
                    403,
                    null,
                    "token 'vera' has role viewer; POST /api/v1/clusters/shop/" + action + " needs operator");
        }
        assertThat(api.store().history().head("shop")).isEqualTo(2);
    }

    @Test
    void anAgentsTokenReadsSnapshotsAndNothingElse() throws Exception {
        assertThat(api.get(SNAPSHOT, TestApi.AGENT.token()).statusCode()).isEqualTo(200);
        for (String path : READS) {
            assertProblem(api.get(path, TestApi.AGENT.token()), 403, null, "token 'node-agent' has role agent");
        }
        assertProblem(
                api.post("/api/v1/clusters/shop/rollback", "{\"toVersion\":1,\"reason\":\"r\"}", TestApi.AGENT.token()),
                403,
                null,
                "needs operator");
        // Path parameters and dot segments do not turn another read into a snapshot read.
        for (String disguised : List.of(
                "/api/v1/clusters/shop/versions;x=/snapshot",
                "/api/v1/clusters/shop/versions;/snapshot",
                "/api/v1/clusters/shop/versions/2/snapshot/../../../versions",
                "/api/v1/audit;/snapshot")) {
            assertThat(api.get(disguised, TestApi.AGENT.token()).statusCode())
                    .as(disguised)
                    .isIn(400, 403);
        }
    }

    @Test
    void failedAuthenticationsAreLoggedWithoutTheTokenAtMostOncePerAddressAndCounted() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(Authentication.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            // From addresses of their own (any 127.x reaches the api), so other tests' failures do not count here.
            for (int i = 0; i < 5; i++) {
                api.raw("GET", "/api/v1/audit", "rs_guess-" + i, "127.0.0.2");
            }
            api.raw("GET", "/api/v1/clusters", null, "127.0.0.3");
            assertThat(lines.list)
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .containsExactly(
                            "authentication failed: GET /api/v1/audit from 127.0.0.2: unknown token",
                            "authentication failed: GET /api/v1/clusters from 127.0.0.3: no Authorization header");
            assertThat(lines.list).allMatch(e -> e.getLevel() == Level.WARN);
        } finally {
            logger.detachAppender(lines);
        }
        assertThat(api.get("/actuator/prometheus").body())
                .containsPattern("rulesync_api_authentication_failures_total\\{reason=\"unknown token\"\\} [1-9]");
    }

    @Test
    void healthProbesAnswerWithoutATokenAndSayOnlyUpOrDown() throws Exception {
        for (String path : List.of("/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness")) {
            HttpResponse<String> r = api.get(path, null);
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            Map<?, ?> health = TestApi.json(r);
            assertThat(health.get("status")).isEqualTo("UP");
            assertThat(health.keySet()).allMatch(k -> k.equals("status") || k.equals("groups"));
        }
    }

    @Test
    void theOpenApiDocumentDescribesTheEndpointsAndMetricsAreServed() throws Exception {
        Map<?, ?> doc = TestApi.json(api.get("/v3/api-docs"));
        assertThat((String) doc.get("openapi")).startsWith("3.");
        assertThat(doc.get("security")).isEqualTo(List.of(Map.of("bearer", List.of())));
        Map<?, ?> rollback = (Map<?, ?>)
                ((Map<?, ?>) ((Map<?, ?>) doc.get("paths")).get("/api/v1/clusters/{cluster}/rollback")).get("post");
        assertThat((String) rollback.get("summary")).startsWith("Publish an earlier version's rules");
        assertThat(((Map<?, ?>) doc.get("paths"))
                        .keySet().stream().map(Object::toString).toList())
                .contains(
                        "/api/v1/clusters",
                        "/api/v1/clusters/{cluster}/versions",
                        "/api/v1/clusters/{cluster}/versions/{version}/diff",
                        "/api/v1/clusters/{cluster}/rollback",
                        "/api/v1/clusters/{cluster}/resume",
                        "/api/v1/audit",
                        "/api/v1/clusters/{cluster}/nodes",
                        "/api/v1/clusters/{cluster}/events");
        String metrics = api.get("/actuator/prometheus").body();
        assertThat(metrics).contains("http_server_requests_seconds_count");
    }

    private static List<String> concat(List<String> a, String b) {
        return java.util.stream.Stream.concat(a.stream(), java.util.stream.Stream.of(b))
                .toList();
    }
}
