package io.rulesync.launcher;

import io.rulesync.api.cli.ApiCommand;
import io.rulesync.api.cli.TokenCommand;
import io.rulesync.cli.OperatorCli;
import io.rulesync.compiler.cli.CompileCommand;
import io.rulesync.compiler.cli.CompilerCommand;
import io.rulesync.compiler.cli.RenderCommand;
import io.rulesync.watcher.cli.WatcherCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The control plane's command line: every central role is a subcommand, so one artifact (and one container image)
 * runs them all; so are the operators' commands that talk to the api ({@code clusters}, {@code history},
 * {@code rollback}, ...: {@link OperatorCli}). The node agent has an image of its own ({@code AgentMain}), and the
 * developer's {@code ./rulesync} adds it and the demo (the demo module).
 */
@Command(
        name = "rulesync",
        description = "Central control plane for Kubernetes service load-balancing rules.",
        mixinStandardHelpOptions = true,
        version = "rulesync 0.1.0",
        subcommands = {
            CompileCommand.class,
            WatcherCommand.class,
            CompilerCommand.class,
            ApiCommand.class,
            TokenCommand.class,
            RenderCommand.class
        })
public final class Main implements Runnable {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The roles and the operators' commands. */
    public static CommandLine commandLine() {
        return OperatorCli.addTo(new CommandLine(new Main()));
    }

    @Spec
    CommandSpec spec;

    /** No subcommand: the usage of the command line this runs in (the demo's adds subcommands). */
    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }
}
