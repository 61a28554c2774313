package io.rulesync.api.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Who may call what, as the controllers declare it ({@link Access} beside each mapping), read through Spring MVC's own
 * handler mapping. The table below is the review of a change: a new route, or a new role on one, changes it.
 */
class AccessRulesTest {
    private static final AccessRules RULES = ControllerRoutes.rules();

    @Test
    void theRouteTableIsWhatTheControllersDeclare() {
        assertThat(RULES.routes().stream().map(AccessRules.Route::line).sorted())
                .containsExactly(
                        "GET /actuator/prometheus: operator, viewer",
                        "GET /api/v1/audit/{id}: operator, viewer",
                        "GET /api/v1/audit: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/deltas: agent, operator, viewer",
                        "GET /api/v1/clusters/{cluster}/deltas: agent, operator, viewer",
                        "GET /api/v1/clusters/{cluster}/events: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/nodes: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/problems: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/rollout: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/versions/{version}/diff: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/versions/{version}/rules: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/versions/{version}/snapshot: agent, operator, viewer",
                        "GET /api/v1/clusters/{cluster}/versions/{version}: operator, viewer",
                        "GET /api/v1/clusters/{cluster}/versions: operator, viewer",
                        "GET /api/v1/clusters/{cluster}: operator, viewer",
                        "GET /api/v1/clusters: operator, viewer",
                        "GET /api/v1/whoami: operator, viewer",
                        "GET /v3/api-docs.yaml: operator, viewer",
                        "GET /v3/api-docs/**: operator, viewer",
                        "GET /v3/api-docs: operator, viewer",
                        "POST /api/v1/clusters/{cluster}/dead-letters/{id}/replay: operator",
                        "POST /api/v1/clusters/{cluster}/nodes/{node}/acks: agent (speaks for its node)",
                        "POST /api/v1/clusters/{cluster}/plan: operator, viewer",
                        "POST /api/v1/clusters/{cluster}/resume: operator",
                        "POST /api/v1/clusters/{cluster}/rollback: operator",
                        "POST /api/v1/clusters/{cluster}/rollout/{step}: operator",
                        "PUT /api/v1/clusters/{cluster}/rollout/policy: operator");
    }

    @Test
    void aPathNoRouteTakesIsTheDispatchersUnderTheApiAndOperatorsOnlyElsewhere() {
        // Under /api/v1/ every handler is ours and in the table: what none takes is a 404 or 405, whoever asks.
        assertThat(RULES.allowed("GET", "/api/v1/nowhere")).containsOnly(Role.AGENT, Role.VIEWER, Role.OPERATOR);
        assertThat(RULES.allowed("DELETE", "/api/v1/clusters/shop"))
                .containsOnly(Role.AGENT, Role.VIEWER, Role.OPERATOR);
        // Elsewhere the libraries' handlers live: deny by default.
        assertThat(RULES.allowed("GET", "/actuator/env")).containsOnly(Role.OPERATOR);
        assertThat(RULES.allowed("GET", "/actuator/metrics")).containsOnly(Role.OPERATOR);
        assertThat(RULES.allowed("GET", "/v3/api-docs.yaml"))
                .as("the document, as YAML")
                .containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(RULES.allowed("HEAD", "/api/v1/clusters/shop/versions/3/snapshot"))
                .as("HEAD as its GET")
                .containsOnly(Role.AGENT, Role.VIEWER, Role.OPERATOR);
    }

    @Test
    void onlyANodesOwnCredentialAcknowledgesForIt() {
        String ack = "/api/v1/clusters/shop/nodes/n1/acks";
        ApiTokens.Caller own = new ApiTokens.Caller("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1"));
        ApiTokens.Caller other = new ApiTokens.Caller("shop-n2", Role.AGENT, new ApiTokens.Scope("shop", "n2"));
        ApiTokens.Caller cluster = new ApiTokens.Caller("shop-agents", Role.AGENT, new ApiTokens.Scope("shop", null));
        ApiTokens.Caller fleet = new ApiTokens.Caller("fleet", Role.AGENT);
        assertThat(RULES.allowed("POST", ack)).containsOnly(Role.AGENT);
        assertThat(RULES.outOfScope(own, "POST", ack, null)).isEmpty();
        assertThat(RULES.outOfScope(other, "POST", ack, null))
                .contains(
                        "token 'shop-n2' is bound to node 'n2' of cluster 'shop'; it may not acknowledge for node 'n1'");
        assertThat(RULES.outOfScope(cluster, "POST", ack, null)).isPresent();
        assertThat(RULES.outOfScope(fleet, "POST", ack, null))
                .contains(
                        "token 'fleet' is not bound to a node: only node 'n1''s own credential may acknowledge for it");
        // A ?node= on an ack is not who it speaks for: the path is.
        assertThat(RULES.outOfScope(other, "POST", ack, "n2")).isPresent();
    }

    @Test
    void theMostSpecificRouteDecidesAsTheDispatcherDoes() {
        assertThat(RULES.match("GET", "/api/v1/clusters/shop/versions/latest/snapshot")
                        .orElseThrow()
                        .variables())
                .containsEntry("cluster", "shop")
                .containsEntry("version", "latest");
        assertThat(RULES.match("GET", "/api/v1/clusters/shop/versions/7")
                        .orElseThrow()
                        .roles())
                .containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(List.of(RULES.match("PUT", "/api/v1/clusters/shop/rollout/policy")
                        .orElseThrow()
                        .route()
                        .handler()))
                .containsExactly("RolloutController.policy");
    }
}
