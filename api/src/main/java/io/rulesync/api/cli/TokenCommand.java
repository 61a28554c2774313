package io.rulesync.api.cli;

import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code rulesync token}: make an api token and the line that configures it (only its hash). */
@Command(
        name = "token",
        description = "Make a random api token. Prints the token (give it to its user; it is stored nowhere) and the "
                + "line to add to the api's --tokens-file.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class TokenCommand implements Callable<Integer> {
    @Option(names = "--name", required = true, description = "Who uses it; the audit log records this name.")
    private String name;

    @Option(
            names = "--role",
            required = true,
            description = "viewer (reads), operator (reads, rolls back, resumes) or " + "agent (reads snapshots only).")
    private String role;

    @Option(
            names = "--cluster",
            paramLabel = "ID",
            description = "Agent tokens: bind it to this cluster; it reads no other " + "cluster's rules (403).")
    private String cluster;

    @Option(
            names = "--node",
            paramLabel = "NAME",
            description =
                    "Agent tokens: bind it to this node of --cluster as well; it " + "reads no other node's rules.")
    private String node;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        ApiTokens.Issued issued;
        try {
            issued = ApiTokens.issue(name, Role.parse(role), new ApiTokens.Scope(cluster, node));
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("token: " + e.getMessage());
            return 2;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("token:       " + issued.token());
        out.println("tokens-file: " + issued.line());
        out.flush();
        return 0;
    }
}
