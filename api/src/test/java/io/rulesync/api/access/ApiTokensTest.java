package io.rulesync.api.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ApiTokensTest {
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
        assertThat(alice.token()).startsWith("rs_").hasSizeGreaterThan(40).isNotEqualTo(ApiTokens.issue("alice", Role.OPERATOR).token());
    }

    @Test
    void badLinesAreRefusedNamingTheSourceAndLine() {
        String hash = "sha256:" + "a".repeat(64);
        assertThatThrownBy(() -> ApiTokens.parse(List.of("# c", "alice operator md5:abc"), "t.txt"))
                .hasMessage("t.txt line 2: expected 'NAME ROLE sha256:HEX' (64 lower-case hex digits)");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("alice root " + hash), "t.txt"))
                .hasMessage("t.txt line 1: role 'root' is not one of viewer, operator, agent");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("al;ce viewer " + hash), "t.txt"))
                .hasMessageContaining("t.txt line 1: name 'al;ce' must be");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a viewer " + hash, "a operator sha256:" + "b".repeat(64)), "t.txt"))
                .hasMessage("t.txt line 2: name 'a' is configured twice");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("a viewer " + hash, "b operator " + hash), "t.txt"))
                .hasMessage("t.txt line 2: the same token is configured twice");
        assertThatThrownBy(() -> ApiTokens.parse(List.of("# nobody"), "t.txt"))
                .hasMessageStartingWith("t.txt: no api tokens configured");
    }

    @Test
    void eachRoleReachesOnlyItsEndpoints() {
        assertThat(AccessRules.allowed("GET", "/api/v1/clusters/c/versions/latest/snapshot")).contains(Role.AGENT, Role.VIEWER);
        assertThat(AccessRules.allowed("GET", "/api/v1/clusters/c/versions")).containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(AccessRules.allowed("GET", "/actuator/prometheus")).containsOnly(Role.VIEWER, Role.OPERATOR);
        assertThat(AccessRules.allowed("POST", "/api/v1/clusters/c/rollback")).containsOnly(Role.OPERATOR);
        // Deny by default: anything not named is operator-only.
        assertThat(AccessRules.allowed("DELETE", "/api/v1/clusters/c")).containsOnly(Role.OPERATOR);
        assertThat(AccessRules.allowed("GET", "/somewhere/else")).containsOnly(Role.OPERATOR);
        assertThat(AccessRules.isPublic("GET", "/actuator/health/readiness")).isTrue();
        assertThat(AccessRules.isPublic("GET", "/actuator/healthz")).isFalse();
        assertThat(AccessRules.isPublic("POST", "/actuator/health")).isFalse();
    }
}
