package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.connect.CliFailure;
import io.rulesync.cli.connect.ExitCode;
import io.rulesync.cli.output.DiffText;
import io.rulesync.cli.output.Output;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(name = "diff", description = "What changed between two versions, per group of nodes that saw the same change, as a unified diff "
        + "(coloured on a terminal). With one version: from the one before it.")
final class DiffCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Parameters(index = "1..*", arity = "1..2", paramLabel = "[FROM] TO", description = "Version numbers, or latest.")
    List<String> versions;

    @Option(names = "--node", paramLabel = "NODE", description = "Only this node's changes.")
    String node;

    @Option(names = "--mode", paramLabel = "MODE", description = "ipvs: the node's IPVS mode changes (needs --node).")
    String mode;

    @Override
    int run(ApiConnection api, Output out) {
        if (mode != null && node == null) {
            throw new CliFailure(ExitCode.USAGE, "--mode " + mode + " compares one node's rules: give --node");
        }
        String to = versions.get(versions.size() - 1);
        String query = (versions.size() == 2 ? "&from=" + ApiConnection.encode(versions.get(0)) : "")
                + (node == null ? "" : "&node=" + ApiConnection.encode(node)) + (mode == null ? "" : "&mode=" + ApiConnection.encode(mode));
        JsonNode diff = api.get(cluster(cluster) + "/versions/" + ApiConnection.encode(to) + "/diff"
                + (query.isEmpty() ? "" : "?" + query.substring(1))).json();
        if (out.structured()) {
            out.structured(diff);
        } else {
            out.text(DiffText.colour(diff.path("text").asString(""), out.terminal()));
        }
        return 0;
    }
}
