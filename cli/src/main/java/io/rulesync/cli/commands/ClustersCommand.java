package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import io.rulesync.cli.output.Terminal;
import picocli.CommandLine.Command;
import tools.jackson.databind.JsonNode;

@Command(
        name = "clusters",
        description = "Every cluster: its newest version, pinned or rolling out, and its nodes' convergence.")
final class ClustersCommand extends OperatorCommand {
    @Override
    int run(ApiConnection api, Output out) {
        JsonNode answer = api.get("/api/v1/clusters").json();
        if (out.structured()) {
            out.structured(answer);
            return 0;
        }
        Table t = new Table("CLUSTER", "VERSION", "STATE", "NODES", "REFUSED");
        for (JsonNode c : answer.path("clusters")) {
            t.row(
                    c.path("cluster").asString(""),
                    c.path("version").asLong(),
                    state(c),
                    nodes(c.path("nodes"), out.terminal()),
                    c.path("refusedObjects").asInt());
        }
        out.table(t);
        return 0;
    }

    static String state(JsonNode c) {
        JsonNode pin = c.path("pinned");
        if (pin.isObject()) {
            return "pinned to v" + pin.path("toVersion").asLong() + " by "
                    + pin.path("actor").asString("");
        }
        JsonNode r = c.path("rollout");
        if (r.isObject() && !"complete".equals(r.path("state").asString(""))) {
            return "rollout " + r.path("state").asString("") + " v"
                    + r.path("version").asLong() + " (wave " + (r.path("wave").asInt() + 1) + ")";
        }
        return "live";
    }

    /** Converged, behind and failed, the failed in red on a terminal. */
    static String nodes(JsonNode counts, Terminal t) {
        int failed = counts.path("failed").asInt();
        return counts.path("converged").asInt() + " converged, "
                + counts.path("behind").asInt() + " behind, " + (failed > 0 ? t.red(failed + " failed") : "0 failed");
    }
}
