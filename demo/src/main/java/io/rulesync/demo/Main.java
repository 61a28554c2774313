package io.rulesync.demo;

import io.rulesync.agent.cli.AgentCommand;
import picocli.CommandLine;

/**
 * {@code ./rulesync}: the control plane's command line ({@link io.rulesync.launcher.Main}) with the node agent and the
 * demo added, for a developer's machine. No image carries it: the demo's in-process broker and embedded PostgreSQL
 * stay here.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        CommandLine root = io.rulesync.launcher.Main.commandLine();
        root.addSubcommand(new CommandLine(new AgentCommand()));
        root.addSubcommand(new CommandLine(new DemoCommand()));
        return root;
    }
}
