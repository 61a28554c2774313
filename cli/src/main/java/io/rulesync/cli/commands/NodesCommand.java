package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import io.rulesync.model.event.Json;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

@Command(
        name = "nodes",
        description =
                "A cluster's nodes: the version each runs, converged / behind / failed, lag, last ack and last error.")
final class NodesCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(
            names = "--state",
            paramLabel = "STATE",
            description = "Only nodes in this state: converged, behind, failed or unknown.")
    String state;

    @Override
    int run(ApiConnection api, Output out) {
        // Every page: an operator asking for a cluster's nodes means all of them (the counts come with the first).
        JsonNode first = api.get(cluster(cluster) + "/nodes?limit=1000"
                        + (state == null ? "" : "&state=" + ApiConnection.encode(state)))
                .json();
        List<JsonNode> nodes = new ArrayList<>();
        first.path("nodes").forEach(nodes::add);
        for (JsonNode page = first; page.path("next").isString(); ) {
            page = api.get(page.path("next").asString()).json();
            page.path("nodes").forEach(nodes::add);
        }
        if (out.structured()) {
            ObjectNode all = ((ObjectNode) first).deepCopy();
            ArrayNode list = Json.MAPPER.createArrayNode();
            nodes.forEach(list::add);
            all.set("nodes", list);
            all.remove("next");
            out.structured(all);
            return 0;
        }
        Table t = new Table("NODE", "STATE", "RUNNING", "BEHIND", "LAG", "LAST ACK", "LAST ERROR");
        for (JsonNode n : nodes) {
            String st = n.path("state").asString("");
            t.row(
                    n.path("node").asString(""),
                    "failed".equals(st) ? out.terminal().red(st) : st,
                    n.path("running").asLong(),
                    n.path("behindVersions").asLong(),
                    n.path("lagSeconds").asLong() + "s",
                    n.path("lastAck").path("at").asString(null),
                    n.path("lastError").path("message").asString(null));
        }
        out.table(t);
        JsonNode c = first.path("counts");
        out.text("version " + first.path("version").asLong() + ": " + ClustersCommand.nodes(c, out.terminal())
                + (c.has("unknown") ? ", " + c.path("unknown").asInt() + " unknown" : ""));
        return 0;
    }
}
