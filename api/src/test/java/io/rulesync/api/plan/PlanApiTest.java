package io.rulesync.api.plan;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans over real HTTP, from a cluster whose events are stored in a real PostgreSQL the compiler's way: a plan's diff is
 * what the compiler then really publishes when the same objects arrive, and it stores nothing.
 */
@RequiresPostgres
class PlanApiTest {
    private static final String C = "shop";
    private static final String YAML = "application/yaml";

    private TestApi api;
    private ClusterHead.Step v1;

    @BeforeEach
    void setUp() throws Exception {
        api = TestApi.onEmpty();
        // web: internalTrafficPolicy Local with its endpoints on n1, so the two nodes' rules differ.
        v1 = StoredClusters.logged(
                api.store(),
                C,
                null,
                -1,
                List.of(
                        up(Fixtures.node("n1", "10.1.0.1")),
                        up(Fixtures.node("n2", "10.1.0.2")),
                        up(
                                "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                                        + "spec: {clusterIP: 10.96.0.10, internalTrafficPolicy: Local, ports: [{name: http, port: 80}]}\n"),
                        up(Fixtures.service("api", "10.96.0.11")),
                        up(Fixtures.slice("web", "n1", "10.244.1.1")),
                        up(Fixtures.slice("api", "n2", "10.244.2.1"))));
    }

    @AfterEach
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(C, yaml);
    }

    private HttpResponse<String> plan(String query, String yaml) throws Exception {
        return api.post("/api/v1/clusters/" + C + "/plan" + query, yaml, YAML, TestApi.VIEWER.token());
    }

    private static final String CHANGE = "---\n" + Fixtures.slice("web", "n1", "10.244.1.1", "10.244.1.3") + "---\n"
            + Fixtures.service("cart", "10.96.0.12") + "---\nkind: ConfigMap\nmetadata: {name: skipped}\n";

    @Test
    void aPlansDiffIsWhatTheCompilerPublishesWhenTheObjectsArrive() throws Exception {
        HttpResponse<String> r = plan("", CHANGE);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Map<?, ?> plan = TestApi.json(r);
        assertThat(plan.get("version")).isEqualTo(1);
        assertThat(plan.get("action")).isEqualTo("apply");
        assertThat(plan.get("objects"))
                .isEqualTo(List.of(
                        Map.of("object", "EndpointSlice shop/web-1", "change", "changed"),
                        Map.of("object", "Service shop/cart", "change", "created")));
        assertThat(plan.get("changes")).isEqualTo(true);
        assertThat(plan.get("refused")).isEqualTo(List.of());
        assertThat((String) plan.get("text"))
                .startsWith("--- shop version 1\n+++ shop version 1 with 2 objects applied\n"
                        + " EndpointSlice shop/web-1: changed\n Service shop/cart: created\n@@ ")
                .contains("+-A KUBE-SEP-")
                .contains("10.244.1.3:8080");

        // The same objects, watched and compiled: version 2's diff is the plan's.
        StoredClusters.logged(
                api.store(),
                C,
                v1,
                6,
                List.of(
                        up(Fixtures.slice("web", "n1", "10.244.1.1", "10.244.1.3")),
                        up(Fixtures.service("cart", "10.96.0.12"))));
        Map<?, ?> real = TestApi.json(api.get("/api/v1/clusters/" + C + "/versions/2/diff"));
        assertThat(plan.get("nodeChanges")).isEqualTo(real.get("changes"));
        assertThat(plan.get("unchangedNodes")).isEqualTo(real.get("unchangedNodes"));
        assertThat(plan.get("nodesAffected")).isEqualTo(2);

        // Planned again after they arrived (the kept base catches up with the new events): nothing would change.
        Map<?, ?> again = TestApi.json(plan("", CHANGE));
        assertThat(again.get("version")).isEqualTo(2);
        assertThat(again.get("changes")).isEqualTo(false);
        assertThat(again.get("objects"))
                .isEqualTo(List.of(
                        Map.of("object", "EndpointSlice shop/web-1", "change", "unchanged"),
                        Map.of("object", "Service shop/cart", "change", "unchanged")));
        assertThat((String) again.get("text")).contains(" (no node's rules differ)\n");
    }

    /**
     * The database restored from a backup under the running api: the base it kept (folded up to version 2) no longer stands
     * for the stored history, and the next plan starts again from what the database now holds.
     */
    @Test
    @RequiresTool({"pg_dump", "pg_restore"})
    void aKeptBaseIsRebuiltWhenTheDatabaseIsRestoredFromABackup(@TempDir Path dir) throws Exception {
        Path backup = dir.resolve("v1.dump");
        api.database().dump(backup);
        StoredClusters.logged(
                api.store(), C, v1, 6, List.of(up(Fixtures.slice("web", "n1", "10.244.1.1", "10.244.1.3"))));
        Map<?, ?> atTwo = TestApi.json(plan("", CHANGE));
        assertThat(atTwo.get("version")).isEqualTo(2);
        assertThat(((List<?>) atTwo.get("objects")).get(0))
                .isEqualTo(Map.of("object", "EndpointSlice shop/web-1", "change", "unchanged"));

        api.database().restore(backup);

        // The pool's connections died with the old database: the first answers are 503 until it has new ones.
        HttpResponse<String> r = Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> plan("", CHANGE), a -> a.statusCode() != 503);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Map<?, ?> atOne = TestApi.json(r);
        assertThat(atOne.get("version")).isEqualTo(1);
        assertThat(((List<?>) atOne.get("objects")).get(0))
                .isEqualTo(Map.of("object", "EndpointSlice shop/web-1", "change", "changed"));
        assertThat(atOne.get("changes")).isEqualTo(true);
    }

    @Test
    void aPlanStoresNothing() throws Exception {
        long events = api.store().events().lastEventId(C);
        assertThat(plan("", CHANGE).statusCode()).isEqualTo(200);
        assertThat(plan("?delete=true", CHANGE).statusCode()).isEqualTo(200);
        assertThat(api.store().events().lastEventId(C)).isEqualTo(events);
        assertThat(api.store().history().head(C)).isEqualTo(1);
    }

    @Test
    void removingObjectsSaysWhatIsNotThere() throws Exception {
        Map<?, ?> plan = TestApi.json(plan(
                "?delete=true",
                "---\n" + Fixtures.service("api", "10.96.0.11") + "---\n" + Fixtures.service("cart", "10.96.0.12")));
        assertThat(plan.get("action")).isEqualTo("delete");
        assertThat(plan.get("objects"))
                .isEqualTo(List.of(
                        Map.of("object", "Service shop/api", "change", "deleted"),
                        Map.of("object", "Service shop/cart", "change", "absent")));
        assertThat(plan.get("changes")).isEqualTo(true);
        assertThat((String) plan.get("text")).contains("--A KUBE-SERVICES").contains("10.96.0.11");
    }

    @Test
    void whatAdmissionWouldRefuseIsNamedWithItsField() throws Exception {
        // shop/aaa sorts before shop/api and claims its ClusterIP: the API server keeps the first, so api would be left
        // out.
        Map<?, ?> plan = TestApi.json(plan("", Fixtures.service("aaa", "10.96.0.11")));
        List<?> refused = (List<?>) plan.get("refused");
        assertThat(refused).hasSize(1);
        Map<?, ?> r = (Map<?, ?>) refused.get(0);
        assertThat(r.get("object")).isEqualTo("Service shop/api");
        assertThat(r.get("field")).isEqualTo("spec.clusterIPs[0]");
        assertThat((String) r.get("message")).contains("shop/aaa");
        assertThat((String) plan.get("text")).contains(" refused: Service shop/api: spec.clusterIPs[0]: ");
    }

    @Test
    void badManifestsAreOneProblemListingEach() throws Exception {
        HttpResponse<String> r = plan(
                "",
                "kind: Service\nmetadata: {name: x, namespace: shop}\nspec: {ports: [{port: 99999}]}\n"
                        + "---\nkind: Service\nmetadata: {name: [}\n");
        assertProblem(r, 400, "body", "problem(s) with the manifests");
        List<?> problems = (List<?>) TestApi.json(r).get("problems");
        assertThat(problems).isNotEmpty();
        assertThat(problems).hasSize(2);
        assertThat(problems.get(0).toString()).contains("body (document 1)").contains("spec.ports[0].port");
        assertThat(problems.get(1).toString()).contains("line 6, column 19");

        HttpResponse<String> notUtf8 =
                api.post("/api/v1/clusters/" + C + "/plan", "kind: Service\n", "text/plain", TestApi.VIEWER.token());
        assertThat(notUtf8.statusCode()).isEqualTo(415);
    }

    @Test
    void whoMayPlanAndWhatItNames() throws Exception {
        // A plan changes nothing: viewers and operators may; an agent's token may not.
        assertThat(api.post("/api/v1/clusters/" + C + "/plan", CHANGE, YAML, TestApi.OPERATOR.token())
                        .statusCode())
                .isEqualTo(200);
        assertThat(api.post("/api/v1/clusters/" + C + "/plan", CHANGE, YAML, TestApi.AGENT.token())
                        .statusCode())
                .isEqualTo(403);
        assertProblem(
                api.post("/api/v1/clusters/nope/plan", CHANGE, YAML, TestApi.VIEWER.token()), 404, "cluster", "nope");
        assertProblem(plan("?mode=ipvs", CHANGE), 400, "node", "mode=ipvs needs ?node=NAME");
        assertProblem(plan("?node=n9", CHANGE), 404, "node", "'n9' is not a node of cluster 'shop'");

        // One node, in IPVS mode: its virtual servers and set members.
        Map<?, ?> ipvs = TestApi.json(plan("?mode=ipvs&node=n1", CHANGE));
        assertThat((String) ipvs.get("text"))
                .contains("@@ n1 (ipvs mode): changed @@")
                .contains("+virtual server ")
                .contains("10.96.0.12:80");
    }

    @Test
    void nodesThatRunIpvsModeSeeTheirIpvsChangesBesideTheIptablesOnes() throws Exception {
        Map<?, ?> none = TestApi.json(plan("", CHANGE));
        assertThat(none.get("ipvsNodes")).isEqualTo(List.of());
        assertThat(none.get("modes")).isEqualTo(Map.of());

        // n2 says it runs IPVS mode; n1 iptables.
        new NodeStatusStore(api.database().dataSource())
                .recordAcks(List.of(
                        new NodeAck(C, "n1", 1, 1, NodeAck.Status.APPLIED, null, 5, 40, "iptables", Instant.now()),
                        new NodeAck(C, "n2", 1, 1, NodeAck.Status.APPLIED, null, 5, 40, "ipvs", Instant.now())));
        Map<?, ?> plan = TestApi.json(plan("", CHANGE));
        assertThat(plan.get("modes")).isEqualTo(Map.of("iptables", 1, "ipvs", 1));
        List<?> ipvs = (List<?>) plan.get("ipvsNodes");
        assertThat(ipvs).singleElement().satisfies(n -> {
            assertThat(((Map<?, ?>) n).get("node")).isEqualTo("n2");
            assertThat(((Map<?, ?>) n).get("change")).isEqualTo("changed");
        });
        assertThat((String) plan.get("text"))
                .contains(" (IPVS mode, as n2 runs it)\n@@ n2 (ipvs mode): changed @@\n")
                .contains("+virtual server ")
                .contains("10.96.0.12:80");
        // Asked for iptables: no IPVS hunk.
        assertThat(TestApi.json(plan("?mode=iptables", CHANGE)).get("ipvsNodes"))
                .isEqualTo(List.of());
    }

    @Test
    void nodesThatRunNftablesModeSeeTheirTablesChanges() throws Exception {
        new NodeStatusStore(api.database().dataSource())
                .recordAcks(List.of(
                        new NodeAck(C, "n1", 1, 1, NodeAck.Status.APPLIED, null, 5, 40, "nftables", Instant.now())));
        Map<?, ?> plan = TestApi.json(plan("", CHANGE));
        assertThat((List<?>) plan.get("nftablesNodes")).singleElement().satisfies(n -> {
            assertThat(((Map<?, ?>) n).get("node")).isEqualTo("n1");
            assertThat(((Map<?, ?>) n).get("change")).isEqualTo("changed");
        });
        assertThat((String) plan.get("text"))
                .contains(" (nftables mode, as n1 runs it)\n@@ n1 (nftables mode): changed @@\n")
                .contains("+add element ip kube-proxy no-endpoint-services { 10.96.0.12 . tcp . 80 ");
        Map<?, ?> one = TestApi.json(plan("?mode=nftables&node=n1", CHANGE));
        assertThat((String) one.get("text"))
                .contains("@@ n1 (nftables mode): changed @@")
                .contains("10.96.0.12 . tcp . 80");
        assertProblem(plan("?mode=nftables", CHANGE), 400, "node", "mode=nftables needs ?node=NAME");
    }
}
