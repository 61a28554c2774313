package io.rulesync.api.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** Which node runs which version, over real HTTP, from acks recorded in a real PostgreSQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class NodesApiTest {
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
        Instant at = Instant.now();
        api.context()
                .getBean(NodeStatusStore.class)
                .recordAcks(List.of(
                        new NodeAck("shop", "n1", 2, 2, NodeAck.Status.APPLIED, null, 12, 40, "iptables", at),
                        new NodeAck(
                                "shop",
                                "n2",
                                2,
                                1,
                                NodeAck.Status.FAILED,
                                "ipv4: iptables-restore exited 1",
                                7,
                                0,
                                "iptables",
                                at)));
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return api.get(path);
    }

    @Test
    void showsWhichNodeRunsWhichVersion() throws Exception {
        HttpResponse<String> r = get("/api/v1/clusters/shop/nodes");
        assertThat(r.statusCode()).isEqualTo(200);
        Map<?, ?> body = (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
        assertThat(body.get("version")).isEqualTo(2);
        List<?> nodes = (List<?>) body.get("nodes");
        Map<?, ?> n1 = (Map<?, ?>) nodes.get(0);
        Map<?, ?> n2 = (Map<?, ?>) nodes.get(1);
        assertThat(n1.get("node")).isEqualTo("n1");
        assertThat(n1.get("state")).isEqualTo("converged");
        assertThat(n1.get("running")).isEqualTo(2);
        assertThat(((Map<?, ?>) n1.get("lastAck")).get("ruleCount")).isEqualTo(40);
        assertThat(n1.containsKey("lastError")).isFalse();
        assertThat(n2.get("state")).isEqualTo("failed");
        assertThat(n2.get("running")).isEqualTo(1);
        assertThat(n2.get("behindVersions")).isEqualTo(1);
        assertThat(((Map<?, ?>) n2.get("lastError")).get("message")).isEqualTo("ipv4: iptables-restore exited 1");
        assertThat(((Map<?, ?>) n2.get("lastError")).get("version")).isEqualTo(2);
    }

    @Test
    void nodesComeInPagesWithCountsOfTheWholeClusterAndAStateFilter() throws Exception {
        Map<?, ?> all = TestApi.json(get("/api/v1/clusters/shop/nodes"));
        assertThat(all.get("counts")).isEqualTo(Map.of("converged", 1, "behind", 0, "failed", 1, "unknown", 0));
        // n2 lacks version 2, made at T+2s (the fixture's clock): its lag counts from then.
        long lag = ((Number) ((Map<?, ?>) ((List<?>) all.get("nodes")).get(1)).get("lagSeconds")).longValue();
        assertThat(lag)
                .isGreaterThanOrEqualTo(Duration.between(Fixtures.T.plusSeconds(2), Instant.now())
                                .toSeconds()
                        - 1);

        Map<?, ?> first = TestApi.json(get("/api/v1/clusters/shop/nodes?limit=1"));
        assertThat(((List<?>) first.get("nodes"))
                        .stream().map(n -> ((Map<?, ?>) n).get("node")).toList())
                .isEqualTo(List.of("n1"));
        assertThat(first.get("next")).isEqualTo("/api/v1/clusters/shop/nodes?after=n1&limit=1");
        Map<?, ?> second = TestApi.json(get((String) first.get("next")));
        assertThat(((List<?>) second.get("nodes"))
                        .stream().map(n -> ((Map<?, ?>) n).get("node")).toList())
                .isEqualTo(List.of("n2"));
        assertThat(second.get("next")).isNull();
        assertThat(second.get("counts")).isEqualTo(all.get("counts"));

        Map<?, ?> failed = TestApi.json(get("/api/v1/clusters/shop/nodes?state=failed"));
        assertThat(((List<?>) failed.get("nodes"))
                        .stream().map(n -> ((Map<?, ?>) n).get("node")).toList())
                .isEqualTo(List.of("n2"));
        TestApi.assertProblem(
                get("/api/v1/clusters/shop/nodes?state=sad"),
                400,
                "state",
                "'sad' is not converged, behind, failed or unknown");
        TestApi.assertProblem(get("/api/v1/clusters/shop/nodes?limit=0"), 400, "limit", "limit: '0' is not 1-5000");
    }

    @Test
    void anUnknownClusterIsAProblem() throws Exception {
        HttpResponse<String> r = get("/api/v1/clusters/nope/nodes");
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        assertThat(r.body()).contains("cluster: 'nope' is not known");
    }
}
