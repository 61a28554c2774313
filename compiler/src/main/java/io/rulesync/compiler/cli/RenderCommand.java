package io.rulesync.compiler.cli;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.store.DatabaseOptions;
import io.rulesync.store.VersionHistory;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rulesync render}: the iptables-restore input of one node at one stored version, read back
 * from PostgreSQL. The same resolution the agent uses, so it shows exactly what that node runs.
 */
@Command(
        name = "render",
        description = "Print the iptables-restore input of NODE at a stored VERSION of CLUSTER (default: the latest).",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class RenderCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Mixin
    private DatabaseOptions db;

    @Option(names = "--cluster", required = true, paramLabel = "CLUSTER")
    private String cluster;

    @Option(names = "--version", paramLabel = "VERSION", description = "Default: the latest.")
    private Long version;

    @Option(names = "--node", required = true, paramLabel = "NODE")
    private String node;

    @Option(
            names = "--ip-family",
            paramLabel = "ipv4|ipv6",
            converter = CompileCommand.FamilyConverter.class,
            defaultValue = "ipv4",
            description = "Default: ${DEFAULT-VALUE}.")
    private IpFamily family;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(db.url());
        ds.setUser(db.user());
        ds.setPassword(db.password());
        VersionHistory store = new VersionHistory(ds);
        long head = store.head(cluster);
        long seq = version == null ? head : version;
        if (head == 0 || seq < 1 || seq > head) {
            err.println(
                    "--version: cluster '" + cluster + "' has " + (head == 0 ? "no versions" : "versions 1-" + head));
            return CompileCommand.EXIT_BAD_INPUT;
        }
        ClusterRules rules = store.rules(cluster, seq);
        Optional<RuleSet> rs = rules.ruleSet(node, family);
        if (rs.isEmpty()) {
            err.println("--node: '" + node + "' is not a node of " + cluster + " at version " + seq);
            return CompileCommand.EXIT_BAD_INPUT;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(rs.get().render());
        out.flush();
        return 0;
    }
}
