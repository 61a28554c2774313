package io.rulesync.cli.commands;

import java.util.List;

/** Every operator command, new instances, in the order {@code --help} lists them. */
public final class Commands {
    private Commands() {}

    public static List<Object> all() {
        return List.of(
                new ClustersCommand(),
                new HistoryCommand(),
                new ShowCommand(),
                new DiffCommand(),
                new PlanCommand(),
                new RulesCommand(),
                new NodesCommand(),
                new EventsCommand(),
                new AuditCommand(),
                new RollbackCommand(),
                new ResumeCommand(),
                new RolloutCommand());
    }
}
