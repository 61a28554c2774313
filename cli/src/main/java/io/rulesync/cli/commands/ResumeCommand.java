package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.output.Output;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(
        name = "resume",
        description = "Unpin a rolled-back cluster: publish a version from its current state (operators).")
final class ResumeCommand extends OperatorCommand {
    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why; kept in the audit log.")
    String reason;

    @Override
    int run(ApiConnection api, Output out) {
        ApiConnection.Answer a = api.post(cluster(cluster) + "/resume", Map.of("reason", reason));
        RollbackCommand.print(a, out, cluster, "resumed", "changes are published again");
        return 0;
    }
}
