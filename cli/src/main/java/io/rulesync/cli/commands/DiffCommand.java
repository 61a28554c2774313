package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.DiffText;
import io.rulesync.cli.output.Output;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "diff",
        description =
                "What changed between two versions, per group of nodes that saw the same change, as a unified diff "
                        + "(coloured on a terminal). With one version: from the one before it.")
final class DiffCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Parameters(index = "1..*", arity = "1..2", paramLabel = "[FROM] TO", description = "Version numbers, or latest.")
    List<String> versions;

    @Mixin
    DiffScope scope = new DiffScope();

    @Override
    int run(ApiConnection api, Output out) {
        String to = versions.get(versions.size() - 1);
        String query = (versions.size() == 2 ? "&from=" + ApiConnection.encode(versions.get(0)) : "") + scope.query();
        JsonNode diff = api.get(DiffScope.withQuery(
                        cluster(cluster) + "/versions/" + ApiConnection.encode(to) + "/diff", query))
                .json();
        if (out.structured()) {
            out.structured(diff);
        } else {
            out.text(DiffText.colour(diff.path("text").asString(""), out.terminal()));
        }
        return 0;
    }
}
