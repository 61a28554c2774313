package io.rulesync.api.history;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.store.HistoryPruning;
import io.rulesync.testing.needs.RequiresPostgres;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A version retention removed gets 410 wherever it is named, saying which versions remain; kept ones are served as before. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class RetainedHistoryApiTest {
    private static final String GONE =
            "cluster 'shop' no longer has version 1: retention removed versions 1-1; versions 2-2 remain";
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
        HistoryPruning.Pruned p =
                new HistoryPruning(api.database().dataSource()).prune("shop", 2, 0, 100, 100, Instant.now());
        assertThat(p.versions()).isEqualTo(1);
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    @Test
    void aRemovedVersionIsGoneWhereverItIsNamed() throws Exception {
        assertProblem(api.get("/api/v1/clusters/shop/versions/1"), 410, "version", "version: " + GONE);
        Map<?, ?> gone = TestApi.json(api.get("/api/v1/clusters/shop/versions/1"));
        assertThat(gone.get("oldest")).isEqualTo(2);
        assertThat(gone.get("latest")).isEqualTo(2);
        assertProblem(api.get("/api/v1/clusters/shop/versions/1/rules?node=n1"), 410, "version", "version: " + GONE);
        assertProblem(
                api.get("/api/v1/clusters/shop/versions/1/snapshot?node=n1", TestApi.AGENT.token()),
                410,
                "version",
                "version: " + GONE);
        assertProblem(api.get("/api/v1/clusters/shop/versions/2/diff?from=1"), 410, "from", "from: " + GONE);
        // The oldest kept version's diff with the one before it needs that one.
        assertProblem(api.get("/api/v1/clusters/shop/versions/2/diff"), 410, "from", "from: " + GONE);
        assertProblem(
                api.post(
                        "/api/v1/clusters/shop/rollback",
                        "{\"toVersion\": 1, \"reason\": \"r\"}",
                        TestApi.OPERATOR.token()),
                410,
                "toVersion",
                "toVersion: " + GONE);
        // A version that never existed is still 404, and says which exist.
        assertProblem(
                api.get("/api/v1/clusters/shop/versions/3"),
                404,
                "version",
                "version: cluster 'shop' has no version 3 (its versions are 2-2)");
    }

    @Test
    void keptVersionsAreServedAsBefore() throws Exception {
        Map<?, ?> history = TestApi.json(api.get("/api/v1/clusters/shop/versions"));
        assertThat(history.get("head")).isEqualTo(2);
        assertThat(api.get("/api/v1/clusters/shop/versions/2/rules?node=n1").body())
                .isEqualTo(api.store()
                        .history()
                        .rules("shop", 2)
                        .ruleSet("n1", io.rulesync.model.cluster.IpFamily.IPV4)
                        .orElseThrow()
                        .render());
        assertThat(api.get("/api/v1/clusters/shop/versions/2/snapshot?node=n1", TestApi.AGENT.token())
                        .statusCode())
                .isEqualTo(200);
    }
}
