package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "history",
        description =
                "A cluster's versions, newest first: when, why (the events or the operator action), how much changed.")
final class HistoryCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "How many versions (default 20).")
    int limit;

    @Option(names = "--before", paramLabel = "VERSION", description = "Only versions older than this one.")
    Long before;

    @Override
    int run(ApiConnection api, Output out) {
        JsonNode answer = api.get(
                        cluster(cluster) + "/versions?limit=" + limit + (before == null ? "" : "&before=" + before))
                .json();
        if (out.structured()) {
            out.structured(answer);
            return 0;
        }
        Table t = new Table("VERSION", "CREATED", "CHANGED", "CAUSE");
        for (JsonNode v : answer.path("versions")) {
            t.row(
                    v.path("version").asLong(),
                    v.path("createdAt").asString(""),
                    v.path("fragmentsChanged").asInt() + " fragments, "
                            + v.path("nodesChanged").asInt() + " nodes",
                    v.path("causeSummary").asString("-"));
        }
        out.table(t);
        return 0;
    }
}
