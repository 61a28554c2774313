package io.rulesync.cli;

import io.rulesync.cli.commands.Commands;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The operators' command line: subcommands of {@code ./rulesync} that talk to the api (the launcher adds them with
 * {@link #addTo}); {@link #main} runs them alone, as the tests do.
 */
@Command(
        name = "rulesync",
        mixinStandardHelpOptions = true,
        description = "The operators' command line for the rulesync api.")
public final class OperatorCli {
    private OperatorCli() {}

    public static void main(String[] args) {
        CommandLine cl = new CommandLine(new OperatorCli());
        addTo(cl);
        System.exit(cl.execute(args));
    }

    /** Adds every operator command to {@code root}. */
    public static CommandLine addTo(CommandLine root) {
        for (Object c : Commands.all()) {
            // Set before adding: it reaches the command's own subcommands (rollout's), built with it.
            root.addSubcommand(
                    new CommandLine(c).setCaseInsensitiveEnumValuesAllowed(true)); // -o JSON and -o json alike
        }
        return root;
    }
}
