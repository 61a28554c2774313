package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "rollback",
        description = "Publish an earlier version's rules as a new version, and pin the cluster there (operators).")
final class RollbackCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(
            names = "--to",
            required = true,
            paramLabel = "VERSION",
            description = "The version whose rules to publish again.")
    long to;

    @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why; kept in the audit log.")
    String reason;

    @Override
    int run(ApiConnection api, Output out) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("toVersion", to);
        body.put("reason", reason);
        ApiConnection.Answer a = api.post(cluster(cluster) + "/rollback", body);
        print(
                a,
                out,
                cluster,
                "rolled back to version " + to,
                "the cluster is pinned; 'rulesync resume " + cluster
                        + " --reason ...' publishes its current state again");
        return 0;
    }

    /** An action's answer: done (200, with its version) or still pending at the compiler (202, with its audit entry). */
    static void print(ApiConnection.Answer a, Output out, String cluster, String done, String after) {
        JsonNode action = a.json();
        if (out.structured()) {
            out.structured(action);
        } else if (a.status() == 202) {
            out.text(cluster + ": " + action.path("action").asString("") + " requested (audit entry "
                    + action.path("id").asLong()
                    + "); the compiler has not carried it out yet: follow it with 'rulesync audit " + cluster + "'");
        } else {
            out.text(cluster + ": " + done + " as version "
                    + action.path("version").asLong() + "; " + after);
        }
    }
}
