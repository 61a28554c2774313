package io.rulesync.agent.conntrack;

import io.rulesync.agent.exec.HostCommand;
import io.rulesync.model.cluster.IpFamily;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Deletes conntrack entries with the {@code conntrack} tool (optionally inside a named network namespace). */
public final class Conntrack {
    private final List<String> prefix;
    private final Consumer<String> log;
    private final boolean dryRun;

    /** {@code dryRun}: only log what would be deleted. */
    public Conntrack(String netns, boolean dryRun, Consumer<String> log) {
        this.prefix = netns == null ? List.of() : List.of("ip", "netns", "exec", netns);
        this.dryRun = dryRun;
        this.log = log;
    }

    /** Runs every flush; a failure is logged, never thrown: stale entries also age out by themselves. */
    public void flush(IpFamily family, List<StaleFlows.Flush> flushes) {
        for (StaleFlows.Flush f : flushes) {
            List<String> cmd = new ArrayList<>(prefix);
            cmd.add("conntrack");
            cmd.add("-D");
            cmd.addAll(f.arguments(family));
            if (dryRun) {
                log.accept("would run: " + String.join(" ", cmd.subList(prefix.size(), cmd.size())));
                continue;
            }
            try {
                HostCommand.Result r = HostCommand.run(cmd, null, Duration.ofSeconds(30));
                String out = r.stdout() + r.stderr();
                if (r.exit() == -1) {
                    log.accept(r.stderr());
                } else if (!r.ok() && !out.contains("0 flow entries have been deleted")) {
                    log.accept(String.join(" ", cmd) + " failed: " + out.strip());
                }
            } catch (IOException e) {
                log.accept("cannot run conntrack: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
