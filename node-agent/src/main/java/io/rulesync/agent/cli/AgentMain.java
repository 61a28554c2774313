package io.rulesync.agent.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The agent image's command line: {@code rulesync agent ...}, as in the developer's {@code ./rulesync}, so a node's
 * arguments read the same wherever they run. It holds the agent alone: the node image carries nothing of the central
 * roles.
 */
@Command(
        name = "rulesync",
        description = "The rulesync node agent.",
        mixinStandardHelpOptions = true,
        version = "rulesync 0.1.0",
        subcommands = AgentCommand.class)
public final class AgentMain implements Runnable {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return new CommandLine(new AgentMain());
    }

    @Spec
    CommandSpec spec;

    /** No subcommand: the usage of the command line this runs in (the demo's adds subcommands). */
    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }
}
