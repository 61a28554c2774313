package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "show",
        description =
                "One version: when and why it was made, the proxy settings it was compiled with, its rollout's steps.")
final class ShowCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Parameters(index = "1", paramLabel = "VERSION", description = "A version number, or latest.")
    String version;

    @Override
    int run(ApiConnection api, Output out) {
        JsonNode v = api.get(cluster(cluster) + "/versions/" + ApiConnection.encode(version))
                .json();
        if (out.structured()) {
            out.structured(v);
            return 0;
        }
        StringBuilder s = new StringBuilder();
        s.append("Cluster:  ").append(cluster).append('\n');
        s.append("Version:  ").append(v.path("version").asLong()).append('\n');
        s.append("Created:  ").append(v.path("createdAt").asString("")).append('\n');
        s.append("Changed:  ")
                .append(v.path("fragmentsChanged").asInt())
                .append(" fragments, ")
                .append(v.path("nodesChanged").asInt())
                .append(" nodes\n");
        s.append("Cause:    ").append(v.path("causeSummary").asString("-")).append('\n');
        s.append(indented(v.path("cause")));
        s.append("Settings:\n").append(indented(v.path("settings")));
        out.text(s.toString());
        if (v.has("rollout")) {
            out.text("Rollout:");
            Table t = new Table("AT", "EVENT", "WAVE", "BY", "DETAIL");
            for (JsonNode e : v.path("rollout")) {
                t.row(
                        e.path("at").asString(""),
                        e.path("event").asString(""),
                        e.path("wave").asString(null),
                        e.path("actor").asString(""),
                        e.path("detail").asString(""));
            }
            out.table(t);
        }
        return 0;
    }

    private static String indented(JsonNode n) {
        if (n.isMissingNode() || n.isNull()) {
            return "";
        }
        return Output.yaml(n).lines().map(l -> "  " + l + "\n").reduce("", String::concat);
    }
}
