package io.rulesync.e2e.bench;

import io.rulesync.api.cli.ApiCommand;
import picocli.CommandLine;

/**
 * A second api replica for the fleet benchmark, in a process of its own as a deployment runs it: {@code rulesync api}'s
 * options, on the benchmark's database. It serves until killed.
 */
public final class ApiReplica {
    private ApiReplica() {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new ApiCommand()).execute(args));
    }
}
