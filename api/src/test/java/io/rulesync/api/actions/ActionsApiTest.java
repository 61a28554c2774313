package io.rulesync.api.actions;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.Outbox;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rollback, resume and the audit log over real HTTP, with no compiler running: requests are
 * recorded and queued, and answered 202 once the (short, in tests) wait runs out. The compiler's
 * side is tested by OperatorActionsTest and end to end by RollbackEndToEndTest.
 */
@RequiresPostgres
class ActionsApiTest {
    private static final String ROLLBACK = "/api/v1/clusters/shop/rollback";
    private TestApi api;

    @BeforeEach
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
    }

    @AfterEach
    void tearDown() {
        api.close();
    }

    private HttpResponse<String> rollback(String body) throws Exception {
        return api.post(ROLLBACK, body, TestApi.OPERATOR.token());
    }

    @Test
    void aRollbackIsRecordedWithWhoAndWhyAndQueuedForTheCompiler() throws Exception {
        HttpResponse<String> r = rollback("{\"toVersion\": 1, \"reason\": \"v2 broke checkout\"}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        Map<?, ?> action = TestApi.json(r);
        assertThat(action.get("status")).isEqualTo("pending");
        assertThat(action.get("actor")).isEqualTo("otto");
        assertThat(action.get("toVersion")).isEqualTo(1);
        assertThat(r.headers().firstValue("Location")).contains("/api/v1/audit/" + action.get("id"));

        // Queued on the cluster's partition of the events topic, as the event the compiler will apply.
        List<Outbox.OutboxMessage> queued = api.store().outbox().pending(10);
        assertThat(queued).singleElement().satisfies(m -> {
            assertThat(m.topic()).isEqualTo(Topics.DEFAULT.events());
            assertThat(m.key()).isEqualTo("shop");
            RollbackRequested e =
                    (RollbackRequested) ((EventCodec.Decoded.Valid) EventCodec.decode(m.payload())).event();
            assertThat(e.toVersion()).isEqualTo(1);
            assertThat(e.actor()).isEqualTo("otto");
            assertThat(e.reason()).isEqualTo("v2 broke checkout");
        });

        // While it is pending, a second request races it and is refused.
        HttpResponse<String> second = rollback("{\"toVersion\": 2, \"reason\": \"me too\"}");
        assertProblem(second, 409, "cluster", "action " + action.get("id") + " of cluster shop is still pending");
        assertThat(TestApi.json(second).get("pendingAction")).isEqualTo("/api/v1/audit/" + action.get("id"));

        Map<?, ?> audit = TestApi.json(api.get("/api/v1/audit?cluster=shop"));
        assertThat((List<?>) audit.get("actions"))
                .singleElement()
                .satisfies(a -> assertThat(((Map<?, ?>) a).get("reason")).isEqualTo("v2 broke checkout"));
        assertThat(TestApi.json(api.get("/api/v1/audit/" + action.get("id"))).get("status"))
                .isEqualTo("pending");
        assertThat(TestApi.json(api.get("/api/v1/audit?cluster=other")).get("actions"))
                .isEqualTo(List.of());
        // Nothing changed yet: only the compiler makes versions.
        assertThat(api.store().history().head("shop")).isEqualTo(2);
    }

    @Test
    void anActionNoCompilerCarriedOutInTimeExpiresAndNoLongerBlocksTheCluster() throws Exception {
        // A request whose event was lost (say, with an events topic created again) ten minutes ago.
        OperatorActionStore actions = api.context().getBean(OperatorActionStore.class);
        long lost = actions.request(
                "shop",
                1L,
                "otto",
                "before the restart",
                Instant.now().minus(Duration.ofMinutes(10)),
                Topics.DEFAULT.events());

        HttpResponse<String> r = rollback("{\"toVersion\": 1, \"reason\": \"after the restart\"}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        Map<?, ?> expired = TestApi.json(api.get("/api/v1/audit/" + lost));
        assertThat(expired.get("status")).isEqualTo("expired");
        assertThat((String) expired.get("outcome"))
                .startsWith("not carried out within 5m: no compiler took the request");
        assertThat(expired.get("completedAt")).isNotNull();

        // The new one is pending and young: a third request is refused, and told when the pending one expires.
        HttpResponse<String> third = rollback("{\"toVersion\": 2, \"reason\": \"me too\"}");
        assertProblem(third, 409, "cluster", "is still pending");
        Instant expiresAt = Instant.parse((String) TestApi.json(third).get("expiresAt"));
        assertThat(expiresAt)
                .isBetween(
                        Instant.now().plus(Duration.ofMinutes(4)), Instant.now().plus(Duration.ofMinutes(5)));
    }

    @Test
    void badRequestsNameTheField() throws Exception {
        assertProblem(rollback(null), 400, "body", "body: expected a JSON object with reason, toVersion");
        assertProblem(rollback("{\"toVersion\": 1"), 400, null, "");
        assertProblem(rollback("{\"reason\": \"r\"}"), 400, "toVersion", "toVersion: is required");
        assertProblem(
                rollback("{\"toVersion\": \"1\", \"reason\": \"r\"}"),
                400,
                "toVersion",
                "toVersion: '1' is not a version number");
        assertProblem(
                rollback("{\"toVersion\": 0, \"reason\": \"r\"}"),
                400,
                "toVersion",
                "toVersion: '0' is not a version number");
        assertProblem(rollback("{\"toVersion\": 1.5, \"reason\": \"r\"}"), 400, "toVersion", "is not a version number");
        assertProblem(rollback("{\"toVersion\": 1}"), 400, "reason", "reason: must say why");
        assertProblem(rollback("{\"toVersion\": 1, \"reason\": \"  \"}"), 400, "reason", "reason: must say why");
        assertProblem(
                rollback("{\"toVersion\": 1, \"reason\": \"" + "x".repeat(1001) + "\"}"),
                400,
                "reason",
                "reason: is 1001 characters long; at most 1000 are kept");
        assertProblem(
                rollback("{\"toVersion\": 1, \"reason\": \"r\", \"force\": true}"),
                400,
                "force",
                "force: is not a field of this request");
        assertProblem(
                rollback("{\"toVersion\": 3, \"reason\": \"r\"}"),
                404,
                "toVersion",
                "toVersion: cluster 'shop' has no version 3 (its versions are 1-2)");
        assertProblem(
                api.post(
                        "/api/v1/clusters/nope/rollback",
                        "{\"toVersion\": 1, \"reason\": \"r\"}",
                        TestApi.OPERATOR.token()),
                404,
                "cluster",
                "cluster: 'nope' is not known");
        assertProblem(
                api.post("/api/v1/clusters/shop/resume", "{\"reason\": \"r\"}", TestApi.OPERATOR.token()),
                409,
                "cluster",
                "cluster 'shop' is not pinned: there is nothing to resume");
        assertProblem(api.get("/api/v1/audit/77"), 404, "id", "there is no operator action '77'");
        assertProblem(api.get("/api/v1/audit?limit=0"), 400, "limit", "limit: '0' is not 1-500");
        // None of these recorded anything.
        assertThat(TestApi.json(api.get("/api/v1/audit")).get("actions")).isEqualTo(List.of());
        assertThat(api.store().outbox().pending(10)).isEmpty();
    }
}
