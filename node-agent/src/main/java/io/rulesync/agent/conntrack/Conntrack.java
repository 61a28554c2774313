package io.rulesync.agent.conntrack;

import io.rulesync.agent.plan.NodeView;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.Unit;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Deletes conntrack entries with the {@code conntrack} tool, through the agent's runner (the node's namespace or a lab's). */
public final class Conntrack {
    private static final Logger log = LoggerFactory.getLogger(Conntrack.class);

    private final CommandRunner runner;
    private final boolean dryRun;

    /** {@code dryRun}: only log what would be deleted. */
    public Conntrack(CommandRunner runner, boolean dryRun) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.dryRun = dryRun;
    }

    /**
     * UDP entries a change made stale (kube-proxy's CleanStaleEntries), for the units it touched;
     * run after the rules are in place. The same endpoints go away in either mode.
     */
    public void clearStale(String node, List<IpFamily> families, NodeView from, NodeView to, Set<Unit> touched) {
        for (IpFamily f : families) {
            List<StaleFlows.Flush> flushes = new ArrayList<>();
            for (Unit u : touched) {
                flushes.addAll(StaleFlows.between(
                        f,
                        u,
                        from.rules().resolve(node, f, u).orElse(RuleFragment.EMPTY),
                        to.rules().resolve(node, f, u).orElse(RuleFragment.EMPTY)));
            }
            if (!flushes.isEmpty()) {
                flush(f, flushes);
            }
        }
    }

    /** Runs every flush; a failure is logged, never thrown: stale entries also age out by themselves. */
    public void flush(IpFamily family, List<StaleFlows.Flush> flushes) {
        for (StaleFlows.Flush f : flushes) {
            List<String> cmd = new ArrayList<>();
            cmd.add("conntrack");
            cmd.add("-D");
            cmd.addAll(f.arguments(family));
            if (dryRun) {
                log.info("would run: {}", String.join(" ", cmd));
                continue;
            }
            try {
                CommandRunner.Result r = runner.run(cmd, null, Duration.ofSeconds(30));
                String out = r.stdout() + r.stderr();
                if (r.exit() == -1) {
                    log.warn(r.stderr());
                } else if (!r.ok() && !out.contains("0 flow entries have been deleted")) {
                    log.warn("{} failed: {}", String.join(" ", cmd), ToolMessage.of(r));
                }
            } catch (IOException e) {
                log.warn("cannot run conntrack: {}", e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
