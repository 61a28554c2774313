package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Table;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

@Command(
        name = "events",
        description = "The changes a cluster's watcher sent, oldest first, with the version each went into.")
final class EventsCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(
            names = "--since",
            paramLabel = "WHEN",
            description = "A duration back from now (30m, 2h, 7d) or an RFC 3339 instant.")
    String since;

    @Option(names = "--kind", paramLabel = "KIND", description = "Service, EndpointSlice or Node.")
    String kind;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100", description = "How many events (default 100).")
    int limit;

    /** A duration back from now (the api takes instants) as an instant; anything else goes to the api as it is. */
    static String instant(String since) {
        Matcher m = Pattern.compile("([0-9]{1,9})([smhd])").matcher(since);
        if (!m.matches()) {
            return since;
        }
        long n = Long.parseLong(m.group(1));
        Duration back = switch (m.group(2)) {
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
        return Instant.now().minus(back).truncatedTo(ChronoUnit.SECONDS).toString();
    }

    @Override
    int run(ApiConnection api, Output out) {
        JsonNode answer = api.get(cluster(cluster) + "/events?limit=" + limit
                        + (since == null ? "" : "&since=" + ApiConnection.encode(instant(since)))
                        + (kind == null ? "" : "&kind=" + ApiConnection.encode(kind)))
                .json();
        if (out.structured()) {
            out.structured(answer);
            return 0;
        }
        Table t = new Table("ID", "RECEIVED", "TYPE", "KIND", "VERSION", "OBJECT");
        for (JsonNode e : answer.path("events")) {
            t.row(
                    e.path("id").asLong(),
                    e.path("receivedAt").asString(""),
                    e.path("type").asString(""),
                    e.path("kind").asString(null),
                    e.path("version").isNumber() ? e.path("version").asLong() : null,
                    e.path("object").asString(null));
        }
        out.table(t);
        return 0;
    }
}
