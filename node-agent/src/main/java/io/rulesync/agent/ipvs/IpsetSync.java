package io.rulesync.agent.ipvs;

import io.rulesync.agent.plan.ipvs.IpsetPlan;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.ipvs.IpvsRules;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Brings one family's IPVS-mode ipsets to the desired members with ipset, in the agent's network
 * namespace or a named one: reads {@code ipset save}, plans ({@link IpsetPlan}), and runs the plan
 * in one {@code ipset restore}.
 */
public final class IpsetSync {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** {@code ipset v7.17: Error in line 4: Element cannot be added to the set: it's already added}. */
    private static final Pattern ERROR_LINE = Pattern.compile("Error in line (\\d+): (.*)");

    private final HostTool tool;

    /** {@code runner}: runs the tools, in the node's network namespace or a lab's ({@link CommandRunner#inNetns}). */
    public IpsetSync(CommandRunner runner) {
        this.tool = new HostTool(runner);
    }

    /** Applies the sets of {@code desired}; returns what was done (an empty plan ran nothing). */
    public IpsetPlan sync(IpvsRules desired) throws IpvsApplyException {
        IpsetPlan plan;
        try {
            plan = IpsetPlan.plan(desired, save());
        } catch (IllegalArgumentException e) {
            throw new IpvsApplyException("cannot read ipset save: " + e.getMessage());
        }
        if (!plan.isEmpty()) {
            restore(plan.script());
        }
        return plan;
    }

    /**
     * Moves the sets from {@code before}, which the kernel holds (the agent applied it), to
     * {@code after} without reading the kernel: the per-version path. Drift is the check's business
     * ({@link #sync}).
     */
    public IpsetPlan update(IpvsRules before, IpvsRules after) throws IpvsApplyException {
        IpsetPlan plan = IpsetPlan.between(before, after);
        if (!plan.isEmpty()) {
            restore(plan.script());
        }
        return plan;
    }

    /** {@code ipset save}: every set of the namespace. */
    public String save() throws IpvsApplyException {
        CommandRunner.Result r = exec(List.of("ipset", "save"), null);
        if (!r.ok()) {
            throw new IpvsApplyException("ipset save failed: " + ToolMessage.of(r));
        }
        return r.stdout();
    }

    private void restore(String script) throws IpvsApplyException {
        CommandRunner.Result r = exec(List.of("ipset", "restore"), script);
        if (r.ok()) {
            return;
        }
        Matcher m = ERROR_LINE.matcher(r.stderr());
        if (m.find()) {
            int n = Integer.parseInt(m.group(1));
            String[] lines = script.split("\n");
            String line = n >= 1 && n <= lines.length ? lines[n - 1] : "line " + n;
            throw new IpvsApplyException(
                    "ipset restore",
                    List.of(new IpvsApplyException.Failure(
                            line, ToolMessage.bounded(m.group(2).strip()))));
        }
        throw new IpvsApplyException("ipset restore failed: " + ToolMessage.of(r));
    }

    private CommandRunner.Result exec(List<String> argv, String stdin) throws IpvsApplyException {
        return tool.run(argv, stdin, TIMEOUT);
    }
}
