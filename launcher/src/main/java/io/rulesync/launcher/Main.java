package io.rulesync.launcher;

import io.rulesync.agent.cli.AgentCommand;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.api.cli.TokenCommand;
import io.rulesync.cli.OperatorCli;
import io.rulesync.compiler.cli.CompileCommand;
import io.rulesync.compiler.cli.CompilerCommand;
import io.rulesync.compiler.cli.RenderCommand;
import io.rulesync.launcher.demo.DemoCommand;
import io.rulesync.watcher.cli.WatcherCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The one command line behind {@code ./rulesync}: every role of the system is a subcommand, so one
 * artifact (and one container image) runs them all; so are the operators' commands that talk to the api
 * ({@code clusters}, {@code history}, {@code rollback}, ...: {@link OperatorCli}).
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
            AgentCommand.class,
            RenderCommand.class,
            DemoCommand.class
        })
public final class Main implements Runnable {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The roles and the operators' commands. */
    static CommandLine commandLine() {
        return OperatorCli.addTo(new CommandLine(new Main()));
    }

    @Override
    public void run() {
        commandLine().usage(System.err);
    }
}
