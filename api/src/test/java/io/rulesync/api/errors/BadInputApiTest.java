package io.rulesync.api.errors;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.testing.needs.RequiresPostgres;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The probe's bad-input list, kept: every bad request the api was sent answers an RFC 9457 problem
 * ({@code application/problem+json}) with the right status, naming the parameter at fault (or the
 * path, or the headers) in its detail. Sent byte for byte over a socket to the real api on real
 * PostgreSQL, so that what Tomcat refuses before any routing is covered too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class BadInputApiTest {
    private static final String VIEWER = TestApi.VIEWER.token();
    private static final String OPERATOR = TestApi.OPERATOR.token();
    private static final String AGENT = TestApi.AGENT.token();
    private static final String V = "/api/v1/clusters/shop/versions";
    private TestApi api;

    /** One bad request and its answer: status, the {@code parameter} property (null: none) and a part of the detail. */
    record Row(String method, String target, String token, int status, String parameter, String detail) {
        @Override
        public String toString() {
            return method + " "
                    + (target.length() > 90 ? target.substring(0, 90) + "... (" + target.length() + " chars)" : target);
        }
    }

    private static Row get(String target, int status, String parameter, String detail) {
        return new Row("GET", target, VIEWER, status, parameter, detail);
    }

    static Stream<Row> badInput() {
        String digits = "1".repeat(9000);
        return Stream.of(
                // Paths that are no route.
                get("/api/v1/nope", 404, null, "path: GET /api/v1/nope is not a route of this api"),
                get(V + "/2/nope", 404, null, "path: GET " + V + "/2/nope is not a route"),
                new Row("GET", "/error", OPERATOR, 404, null, "path: GET /error is not a route of this api"),
                new Row("GET", "/error", VIEWER, 403, null, "GET /error needs operator"),
                new Row("DELETE", "/api/v1/clusters", OPERATOR, 405, null, "DELETE"),
                get("/api/v1/clusters/nope/versions", 404, "cluster", "cluster: 'nope' is not known"),
                // Versions.
                get(V + "/x", 400, "version", "version: 'x' is not a version number (1, 2, ...) or 'latest'"),
                get(V + "/0", 400, "version", "version: '0' is not a version number"),
                get(V + "/-1", 400, "version", "version: '-1' is not a version number"),
                get(
                        V + "/99999999999999999999",
                        400,
                        "version",
                        "version: '99999999999999999999' is not a version number"),
                get(V + "/LATEST", 400, "version", "version: 'LATEST' is not a version number"),
                get(V + "/99", 404, "version", "version: cluster 'shop' has no version 99 (its versions are 1-2)"),
                get(V + "/x/rules?node=n1", 400, "version", "version: 'x' is not a version number"),
                get(V + "/2/diff?from=x", 400, "from", "from: 'x' is not a version number (1, 2, ...) or 'latest'"),
                get(V + "/2/diff?from=9", 404, "from", "from: cluster 'shop' has no version 9"),
                new Row(
                        "GET",
                        V + "/x/snapshot?node=n1",
                        AGENT,
                        400,
                        "version",
                        "version: 'x' is not a version number"),
                get(V + "?before=x", 400, "before", "before: 'x' is not a version number"),
                // Other parameters' values.
                get(V + "?limit=0", 400, "limit", "limit: '0' is not 1-500"),
                get(V + "?limit=501", 400, "limit", "limit: '501' is not 1-500"),
                get(V + "/2/rules", 400, "node", "node: the query parameter ?node=NAME is required"),
                get(V + "/2/rules?node=Bad_Node", 400, "node", "node: 'Bad_Node' is not a DNS-1123 subdomain"),
                get(V + "/2/rules?node=n1&family=ipv5", 400, "family", "family: 'ipv5' is not ipv4 or ipv6"),
                get(V + "/2/rules?node=n1&mode=nft", 400, "mode", "mode: 'nft' is not iptables, ipvs or nftables"),
                get(
                        "/api/v1/clusters/shop/events?kind=Pod",
                        400,
                        "kind",
                        "kind: 'Pod' is not Service, EndpointSlice or Node"),
                get(
                        "/api/v1/clusters/shop/nodes?state=sleepy",
                        400,
                        "state",
                        "state: 'sleepy' is not converged, behind"),
                get(
                        "/api/v1/audit?cluster=Bad_Cluster",
                        400,
                        "cluster",
                        "cluster: 'Bad_Cluster' is not a DNS-1123 label"),
                get("/api/v1/audit/x", 404, "id", "id: there is no operator action 'x'"),
                // Out-of-range and malformed instants.
                get(
                        "/api/v1/clusters/shop/events?since=-100000-01-01T00:00:00Z",
                        400,
                        "since",
                        "since: '-100000-01-01T00:00:00Z' is outside the years 0000-9999"),
                get(
                        "/api/v1/clusters/shop/events?since=%2B10000-01-01T00:00:00Z",
                        400, "since", "since: '+10000-01-01T00:00:00Z' is outside the years 0000-9999"),
                get(
                        "/api/v1/clusters/shop/events?since=yesterday",
                        400,
                        "since",
                        "since: 'yesterday' is not an instant"),
                // Query parameters no endpoint takes.
                get(
                        V + "?limt=1",
                        400,
                        "limt",
                        "limt: is not a query parameter of GET /api/v1/clusters/{cluster}/versions (it takes before, limit)"),
                get(
                        "/api/v1/clusters?x=1",
                        400,
                        "x",
                        "x: is not a query parameter of GET /api/v1/clusters, which takes none"),
                get(
                        V + "/2?node=n1",
                        400,
                        "node",
                        "node: is not a query parameter of GET /api/v1/clusters/{cluster}/versions/{version}"),
                new Row(
                        "GET",
                        V + "/latest/snapshot?node=n1&nodes=n2",
                        AGENT,
                        400,
                        "nodes",
                        "nodes: is not a query parameter"),
                new Row(
                        "POST",
                        "/api/v1/clusters/shop/rollback?force=1",
                        OPERATOR,
                        400,
                        "force",
                        "force: is not a query parameter"),
                // Encoded junk, in the path (Tomcat's refusals) and in the query.
                get(
                        "/api/v1/clusters/a%2Fb/versions",
                        400, null, "path: an encoded '/' (%2F) is not allowed in the path"),
                get("/api/v1/clusters/a%00b/versions", 400, null, "path: the URL is not one the api can read"),
                get(
                        "/api/v1/clusters/a%zzb/versions",
                        400, null, "path: a '%' in the path is not followed by two hex digits"),
                get(
                        "/api/v1/clusters/a%2/versions",
                        400, null, "path: a '%' in the path is not followed by two hex digits"),
                get(V + "?limit=%zz", 400, "limit", "limit: the value is not valid percent-encoded UTF-8"),
                // The deltas' mappings read ?watch to choose a handler, so Tomcat decodes the query first: still named.
                get(
                        "/api/v1/clusters/shop/deltas?after=1&watch=%zz",
                        400, "watch", "watch: the value is not valid percent-encoded UTF-8"),
                get(
                        "/api/v1/clusters/shop/versions?limit=%zz&watch=true",
                        400, "limit", "limit: the value is not valid percent-encoded UTF-8"),
                get(V + "?limit=%C3", 400, "limit", "limit: the value is not valid percent-encoded UTF-8"),
                get(V + "?%zz=1", 400, "%zz", "%zz: the name is not valid percent-encoded UTF-8"),
                get(V + "?limit=1%00", 400, "limit", "limit: the value holds the control character \\x00"),
                get(
                        "/api/v1/audit?cluster=%00",
                        400, "cluster", "cluster: the value holds the control character \\x00"),
                get(V + "/2/rules?node=n1%0Aforged", 400, "node", "node: the value holds the control character \\x0a"),
                // Longer than Tomcat's 8 KB for the request line and headers.
                get(
                        V + "?before=" + digits,
                        400,
                        null,
                        "headers: the request line and headers are larger than the api takes (8 KB)"),
                get(
                        "/api/v1/clusters/" + "a".repeat(9000) + "/versions",
                        400,
                        null,
                        "headers: the request line and headers are larger"));
    }

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

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void answersAProblemNamingWhatIsWrong(Row row) throws Exception {
        assertProblem(api.raw(row.method(), row.target(), row.token()), row.status(), row.parameter(), row.detail());
    }

    @Test
    void latestNamesTheNewestVersionWhereverAVersionIsNamed() throws Exception {
        assertThat(TestApi.json(api.get(V + "/latest")).get("version")).isEqualTo(2);
        assertThat(api.get(V + "/latest").body()).isEqualTo(api.get(V + "/2").body());
        assertThat(api.get(V + "/latest/rules?node=n1").body())
                .isEqualTo(api.get(V + "/2/rules?node=n1").body())
                .contains("*nat");
        assertThat(api.get(V + "/latest/diff").body())
                .isEqualTo(api.get(V + "/2/diff").body());
        Map<?, ?> none = TestApi.json(api.get(V + "/latest/diff?from=latest"));
        assertThat(none.get("from")).isEqualTo(2);
        assertThat(none.get("to")).isEqualTo(2);
        assertThat(none.get("changes")).isEqualTo(List.of());
        assertThat(TestApi.json(api.get(V + "/1/diff?from=latest")).get("from")).isEqualTo(2);
        assertThat(api.get(V + "/latest/snapshot?node=n1", AGENT).body())
                .isEqualTo(api.get(V + "/2/snapshot?node=n1", AGENT).body());
    }
}
