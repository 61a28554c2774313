package io.rulesync.api.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code rulesync token}: the token it prints authenticates as the line it prints says, bound where it was asked. */
class TokenCommandTest {
    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new TokenCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    private static String field(String out, String name) {
        return out.lines()
                .filter(l -> l.startsWith(name + ":"))
                .findFirst()
                .orElseThrow()
                .substring(name.length() + 1)
                .strip();
    }

    @Test
    void anAgentTokenBoundToAClusterAndNode() {
        Run r = run("--name", "shop-n1", "--role", "agent", "--cluster", "shop", "--node", "n1");
        assertThat(r.exit()).isZero();
        String line = field(r.out(), "tokens-file");
        assertThat(line).startsWith("shop-n1 agent sha256:").endsWith(" cluster=shop node=n1");
        ApiTokens tokens = ApiTokens.parse(List.of(line), "test");
        assertThat(tokens.authenticate(field(r.out(), "token")))
                .contains(new ApiTokens.Caller("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1")));
    }

    @Test
    void onlyAgentTokensAreBound() {
        Run r = run("--name", "vera", "--role", "viewer", "--cluster", "shop");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("token: only agent tokens are bound to a cluster or node, not viewer tokens");
        Run node = run("--name", "a", "--role", "agent", "--node", "n1");
        assertThat(node.exit()).isEqualTo(2);
        assertThat(node.err()).contains("token: node=n1 needs cluster= too");
    }
}
