package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "audit",
        description = "Operator actions, newest first: who asked for what, why, and what came of it; and the newest "
                + "staged-rollout steps and the notifications webhooks could not deliver.")
final class AuditCommand extends OperatorCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "CLUSTER", description = "Only this cluster's.")
    String cluster;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "How many actions (default 20).")
    int limit;

    @Override
    int run(ApiConnection api, Output out) {
        JsonNode answer = api.get("/api/v1/audit?limit=" + limit
                        + (cluster == null ? "" : "&cluster=" + ApiConnection.encode(cluster)))
                .json();
        if (out.structured()) {
            out.structured(answer);
            return 0;
        }
        Table t = new Table("ID", "REQUESTED", "CLUSTER", "ACTION", "BY", "STATUS", "RESULT", "REASON");
        for (JsonNode a : answer.path("actions")) {
            String action = a.path("action").asString("")
                    + (a.has("toVersion") ? " to v" + a.path("toVersion").asLong() : "");
            String status = a.path("status").asString("");
            String result = a.path("version").isNumber()
                    ? "v" + a.path("version").asLong()
                    : a.path("outcome").asString(null);
            t.row(
                    a.path("id").asLong(),
                    a.path("requestedAt").asString(""),
                    a.path("cluster").asString(""),
                    action,
                    a.path("actor").asString(""),
                    "rejected".equals(status) || "expired".equals(status)
                            ? out.terminal().red(status)
                            : status,
                    result,
                    a.path("reason").asString(""));
        }
        if (t.isEmpty()) {
            out.text("no operator actions" + (cluster == null ? "" : " on " + cluster));
        } else {
            out.table(t);
        }
        if (!answer.path("rolloutSteps").isEmpty()) {
            out.text("\nRollout steps:");
            Table s = new Table("AT", "CLUSTER", "VERSION", "EVENT", "WAVE", "BY", "DETAIL");
            for (JsonNode e : answer.path("rolloutSteps")) {
                s.row(
                        e.path("at").asString(""),
                        e.path("cluster").asString(""),
                        "v" + e.path("version").asLong(),
                        e.path("event").asString(""),
                        e.path("wave").asString(null),
                        e.path("actor").asString(""),
                        e.path("detail").asString(""));
            }
            out.table(s);
        }
        if (!answer.path("undelivered").isEmpty()) {
            out.text("\nNotifications webhooks were not told:");
            Table u = new Table("FAILED", "CLUSTER", "KIND", "RECEIVER", "ATTEMPTS", "ERROR");
            for (JsonNode f : answer.path("undelivered")) {
                u.row(
                        f.path("failedAt").asString(""),
                        f.path("cluster").asString(""),
                        f.path("kind").asString(""),
                        f.path("destination").asString(""),
                        f.path("attempts").asInt(),
                        out.terminal().red(f.path("error").asString("")));
            }
            out.table(u);
        }
        return 0;
    }
}
