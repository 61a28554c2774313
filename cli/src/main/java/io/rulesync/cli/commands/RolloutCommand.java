package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.connect.CliFailure;
import io.rulesync.cli.connect.ExitCode;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

/** The staged rollout's verbs, as subcommands: {@code rulesync rollout status shop}, {@code rulesync rollout promote shop ...}. */
@Command(
        name = "rollout",
        description =
                "A cluster's staged rollout: where it stands, and the operators' promote, pause, abort and policy.",
        subcommands = {
            RolloutCommand.Status.class,
            RolloutCommand.Promote.class,
            RolloutCommand.Pause.class,
            RolloutCommand.Abort.class,
            RolloutCommand.Policy.class
        })
final class RolloutCommand {
    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "Show this help.")
    boolean help;

    @Command(
            name = "status",
            description = "The version going out and the one the rest keep, each wave's nodes, the bake left, the log.")
    static final class Status extends OperatorCommand {
        @Parameters(index = "0", paramLabel = "CLUSTER")
        String cluster;

        @Override
        int run(ApiConnection api, Output out) {
            JsonNode r = api.get(cluster(cluster) + "/rollout").json();
            if (out.structured()) {
                out.structured(r);
                return 0;
            }
            String state = r.path("state").asString("");
            if ("none".equals(state)) {
                out.text(cluster + ": no rollout policy; every node gets each version at once");
            } else if (r.has("version")) {
                boolean complete = "complete".equals(state);
                out.text(cluster + ": version " + r.path("version").asLong() + " "
                        + ("halted".equals(state) ? out.terminal().red(state) : state)
                        + (complete
                                ? ""
                                : ", the rest keep version " + r.path("stable").asLong()
                                        + (r.has("wave")
                                                ? "; wave '" + r.path("wave").asString("") + "'"
                                                : ""))
                        + (r.path("bakeLeftSeconds").asLong() > 0
                                ? ", " + r.path("bakeLeftSeconds").asLong() + " s left to bake"
                                : "")
                        + (r.has("cause") ? "\n  cause: " + r.path("cause").asString("") : ""));
                Table w = new Table("WAVE", "OPEN", "BAKE", "NODES", "CONVERGED", "BEHIND", "FAILED");
                for (JsonNode x : r.path("waves")) {
                    int failed = x.path("failed").asInt();
                    w.row(
                            x.path("name").asString(""),
                            x.path("open").asBoolean() ? "yes" : "no",
                            x.path("bakeSeconds").asLong() + "s",
                            x.path("nodes").asInt(),
                            x.path("converged").asInt(),
                            x.path("behind").asInt(),
                            failed > 0 ? out.terminal().red(String.valueOf(failed)) : "0");
                }
                out.table(w);
            } else {
                out.text(cluster + ": " + state);
            }
            if (!r.path("log").isEmpty()) {
                Table l = new Table("AT", "VERSION", "EVENT", "WAVE", "BY", "DETAIL");
                for (JsonNode e : r.path("log")) {
                    l.row(
                            e.path("at").asString(""),
                            "v" + e.path("version").asLong(),
                            e.path("event").asString(""),
                            e.path("wave").asString(null),
                            e.path("actor").asString(""),
                            e.path("detail").asString(""));
                }
                out.text("");
                out.table(l);
            }
            return 0;
        }
    }

    /** promote, pause and abort: a verb, a cluster and a reason. */
    abstract static class Step extends OperatorCommand {
        @Parameters(index = "0", paramLabel = "CLUSTER")
        String cluster;

        @Option(
                names = "--reason",
                required = true,
                paramLabel = "TEXT",
                description = "Why; kept in the rollout's log.")
        String reason;

        @Override
        int run(ApiConnection api, Output out) {
            // The verb is the command's name: promote, pause or abort, as the api's path has it.
            JsonNode r = api.post(cluster(cluster) + "/rollout/" + spec.name(), Map.of("reason", reason))
                    .json();
            if (out.structured()) {
                out.structured(r);
            } else {
                out.text(cluster + ": version " + r.path("version").asLong() + " is "
                        + r.path("state").asString("")
                        + (r.has("wave") ? ", wave '" + r.path("wave").asString("") + "'" : ""));
            }
            return 0;
        }
    }

    @Command(
            name = "promote",
            description = "Open the next wave now (skip the rest of the bake), or resume a paused rollout (operators).")
    static final class Promote extends Step {}

    @Command(name = "pause", description = "Stop opening waves; the nodes keep what they have (operators).")
    static final class Pause extends Step {}

    @Command(name = "abort", description = "Halt the version where it is: no further wave gets it (operators).")
    static final class Abort extends Step {}

    @Command(
            name = "policy",
            description = "Set the cluster's rollout policy from a YAML or JSON file, or remove it (operators).")
    static final class Policy extends OperatorCommand {
        @Parameters(index = "0", paramLabel = "CLUSTER")
        String cluster;

        @ArgGroup(multiplicity = "1")
        Source source;

        static final class Source {
            @Option(
                    names = {"-f", "--file"},
                    paramLabel = "FILE",
                    description = "The policy: waves, failWhen, onFailure.")
            Path file;

            @Option(names = "--remove", description = "Remove the policy: every node gets each version at once.")
            boolean remove;
        }

        @Option(
                names = "--reason",
                required = true,
                paramLabel = "TEXT",
                description = "Why; kept in the rollout's log.")
        String reason;

        @Override
        int run(ApiConnection api, Output out) {
            Object policy = null;
            if (source.file != null) {
                try {
                    policy = new Load(LoadSettings.builder().build()).loadFromString(Files.readString(source.file));
                } catch (IOException | YamlEngineException e) {
                    throw new CliFailure(
                            ExitCode.USAGE,
                            "cannot read " + source.file + ": "
                                    + e.getMessage().lines().findFirst().orElse(""));
                }
                if (!(policy instanceof Map)) {
                    throw new CliFailure(ExitCode.USAGE, source.file + ": expected a policy with waves");
                }
            }
            Map<String, Object> body = new HashMap<>();
            body.put("policy", policy);
            body.put("reason", reason);
            JsonNode r = api.put(cluster(cluster) + "/rollout/policy", body).json();
            if (out.structured()) {
                out.structured(r);
            } else {
                out.text(cluster + (policy == null ? ": rollout policy removed" : ": rollout policy set")
                        + "; 'rulesync rollout status " + cluster + "' shows where its rollout stands");
            }
            return 0;
        }
    }
}
