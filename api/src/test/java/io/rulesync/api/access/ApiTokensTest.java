package io.rulesync.api.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ApiTokensTest {
    private static final AccessRules RULES = ControllerRoutes.rules();

    @Test
    void anIssuedTokenAuthenticatesAsItsNameAndRoleAndTheLineHoldsOnlyItsHash() {
        ApiTokens.Issued alice = ApiTokens.issue("alice", Role.OPERATOR);
        ApiTokens.Issued bob = ApiTokens.issue("bob@example.org", Role.VIEWER);
        ApiTokens tokens = ApiTokens.parse(List.of("# team", "", alice.line(), "  " + bob.line() + "  "), "tokens.txt");
        assertThat(tokens.authenticate(alice.token())).contains(new ApiTokens.Caller("alice", Role.OPERATOR));
        assertThat(tokens.authenticate(bob.token())).contains(new ApiTokens.Caller("bob@example.org", Role.VIEWER));
        assertThat(tokens.authenticate(alice.token() + "x")).isEmpty();
        assertThat(tokens.authenticate("")).isEmpty();
        assertThat(alice.line()).startsWith("alice operator sha256:").doesNotContain(alice.token());
        assertThat(alice.token())
                .startsWith("rs_")
                .hasSizeGreaterThan(40)
                .isNotEqualTo(ApiTokens.issue("alice", Role.OPERATOR).token());
    }

    @Test
    void badLinesAreRefusedNamingTheSourceAndLine() {
        String hash = "sha256:" + "a".repeat(64);
        assertThatThrownBy(() -> ApiTokens.parse(List.of("# c", "alice operator md5:abc"), "t.txt"))
                .hasMessage(
                        "t.txt line 2: expected 'NAME ROLE sha256:HEX' (64 lower-case hex digits), an agent's optionally "
                                + "followed by 'cluster=ID' and 'node=NAME'");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("alice root " + hash), "t.txt"))
                .hasMessage("t.txt line 1: role 'root' is not one of viewer, operator, agent");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("al;ce viewer " + hash), "t.txt"))
                .hasMessageContaining("t.txt line 1: name 'al;ce' must be");
        assertThatThrownBy(() ->
                        ApiTokens.parse(List.of("a viewer " + hash, "a operator sha256:" + "b".repeat(64)), "t.txt"))
                .hasMessage("t.txt line 2: name 'a' is configured twice");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a viewer " + hash, "b operator " + hash), "t.txt"))
                .hasMessage("t.txt line 2: the same token is configured twice");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("# nobody"), "t.txt"))
                .hasMessageStartingWith("t.txt: no api tokens configured");
    }

    @Test
    void eachRoleReachesOnlyItsEndpoints() {
        assertThat(RULES.allowed("GET", "/api/v1/clusters/c/versions/latest/snapshot"))
                .contains(Role.AGENT, Role.VIEWER);
        assertThat(RULES.allowed("GET", "/api/v1/clusters/c/versions")).containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(RULES.allowed("GET", "/actuator/prometheus")).containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(RULES.allowed("POST", "/api/v1/clusters/c/rollback")).containsOnly(Role.OPERATOR);
        // Deny by default outside the api's own paths (AccessRulesTest has the rest).
        assertThat(RULES.allowed("GET", "/somewhere/else")).containsOnly(Role.OPERATOR);
        assertThat(AccessRules.isPublic("GET", "/actuator/health/readiness")).isTrue();
        assertThat(AccessRules.isPublic("GET", "/actuator/healthz")).isFalse();
        assertThat(AccessRules.isPublic("POST", "/actuator/health")).isFalse();
        assertThat(AccessRules.isPublic("GET", "/")).isTrue();
        assertThat(AccessRules.isPublic("GET", "/ui/app.js")).isTrue();
        assertThat(AccessRules.isPublic("GET", "/ui/../api/v1/clusters")).isFalse();
        assertThat(AccessRules.isPublic("POST", "/")).isFalse();
        assertThat(AccessRules.isPublic("GET", "/api/v1/clusters")).isFalse();
    }

    @Test
    void anAgentTokenMayBeBoundToAClusterAndANode() {
        ApiTokens.Issued shop = ApiTokens.issue("shop-agents", Role.AGENT, new ApiTokens.Scope("shop", null));
        ApiTokens.Issued node = ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1.example"));
        ApiTokens.Issued any = ApiTokens.issue("fleet-agents", Role.AGENT);
        assertThat(shop.line()).endsWith(" cluster=shop");
        assertThat(node.line()).endsWith(" cluster=shop node=n1.example");
        ApiTokens tokens = ApiTokens.parse(List.of(shop.line(), node.line(), any.line()), "t.txt");
        assertThat(tokens.authenticate(shop.token()))
                .contains(new ApiTokens.Caller("shop-agents", Role.AGENT, new ApiTokens.Scope("shop", null)));
        assertThat(tokens.authenticate(node.token()).orElseThrow().scope())
                .isEqualTo(new ApiTokens.Scope("shop", "n1.example"));
        assertThat(tokens.unboundAgents()).containsExactly("fleet-agents");
    }

    @Test
    void aBadScopeIsRefusedNamingTheLineAndTheField() {
        String line = "a agent sha256:" + "a".repeat(64);
        assertThatThrownBy(
                        () -> ApiTokens.parse(List.of("v viewer sha256:" + "a".repeat(64) + " cluster=shop"), "t.txt"))
                .hasMessage(
                        "t.txt line 1: only agent tokens are bound to a cluster or node; a viewer token's line ends with its hash");
        assertThatThrownBy(() -> ApiTokens.parse(List.of(line + " cluster=Shop_1"), "t.txt"))
                .hasMessageStartingWith("t.txt line 1: cluster=Shop_1: ");
        assertThatThrownBy(() -> ApiTokens.parse(List.of(line + " node=n1"), "t.txt"))
                .hasMessage("t.txt line 1: node=n1 needs cluster= too");
        assertThatThrownBy(() -> ApiTokens.parse(List.of(line + " cluster=a cluster=b"), "t.txt"))
                .hasMessage("t.txt line 1: 'cluster=b' is not cluster=ID or node=NAME (each at most once)");
        assertThatThrownBy(() -> ApiTokens.parse(List.of(line + " zone=a"), "t.txt"))
                .hasMessage("t.txt line 1: 'zone=a' is not cluster=ID or node=NAME (each at most once)");
        assertThatThrownBy(() -> ApiTokens.issue("o", Role.OPERATOR, new ApiTokens.Scope("shop", null)))
                .hasMessage("only agent tokens are bound to a cluster or node, not operator tokens");
    }

    @Test
    void aBoundAgentReadsOnlyItsClusterAndNode() {
        ApiTokens.Caller shop = new ApiTokens.Caller("shop-agents", Role.AGENT, new ApiTokens.Scope("shop", null));
        ApiTokens.Caller n1 = new ApiTokens.Caller("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1"));
        String snapshot = "/api/v1/clusters/shop/versions/latest/snapshot";
        assertThat(RULES.outOfScope(shop, "GET", snapshot, "n2")).isEmpty();
        assertThat(RULES.outOfScope(shop, "GET", "/api/v1/clusters/bank/versions/latest/snapshot", "n2"))
                .contains("token 'shop-agents' is bound to cluster 'shop'; it may not read cluster 'bank'");
        // A cluster whose name starts like the bound one is another cluster.
        assertThat(RULES.outOfScope(shop, "GET", "/api/v1/clusters/shop2/versions/latest/snapshot", "n2"))
                .isPresent();
        assertThat(RULES.outOfScope(n1, "GET", snapshot, "n1")).isEmpty();
        assertThat(RULES.outOfScope(n1, "GET", snapshot, "n2"))
                .contains(
                        "token 'shop-n1' is bound to node 'n1' of cluster 'shop'; it may not read the rules of node 'n2'");
        assertThat(RULES.outOfScope(n1, "GET", snapshot, null))
                .get()
                .asString()
                .endsWith("it may not read every node's rules");
        assertThat(RULES.outOfScope(
                        new ApiTokens.Caller("fleet", Role.AGENT),
                        "GET",
                        "/api/v1/clusters/bank/versions/1/snapshot",
                        "x"))
                .isEmpty();
    }
}
