package io.rulesync.agent.apply;

import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The kernel's packet filter through the iptables tools ({@code iptables-restore --noflush},
 * {@code iptables -S CHAIN}), optionally inside a named network namespace ({@code ip netns exec}),
 * which is how tests and labs run a node without touching the host.
 */
public final class IptablesNetfilter implements Netfilter {
    /** How the kernel prints a rule the compiler wrote (iptables-save's canonical form). */
    @FunctionalInterface
    public interface Printer {
        /** The grammar's reading of the rule, printed as the kernel does ({@link Rule#kernelForm}). */
        Printer KERNEL_FORM = (family, table, chain, rule) ->
                RuleGrammar.parse(table, family, chain, rule).kernelForm(family, chain);

        String printed(IpFamily family, Table table, String chain, String rule);
    }

    private final IpFamily family;
    private final CommandRunner runner;
    private final Printer printer;

    /** {@code runner}: runs the tools, in the node's network namespace or a lab's ({@link CommandRunner#inNetns}). */
    public IptablesNetfilter(IpFamily family, CommandRunner runner, Printer printer) {
        this.family = family;
        this.runner = Objects.requireNonNull(runner, "runner");
        this.printer = printer;
    }

    @Override
    public IpFamily family() {
        return family;
    }

    @Override
    public String mode() {
        return "iptables";
    }

    private String tool(String name) {
        return family == IpFamily.IPV6 ? name.replace("iptables", "ip6tables") : name;
    }

    @Override
    public void restore(String script) throws RestoreFailedException {
        CommandRunner.Result r;
        try {
            r = run(script, tool("iptables-restore"), "--noflush", "-w", "5");
        } catch (UncheckedIOException e) {
            // The tool never ran (its input could not be written: a full temporary space), so the kernel is as it was:
            // an apply that failed, which the applier rolls back and the agent reports, not an agent that dies.
            throw new RestoreFailedException(
                    e.getMessage() + ": " + e.getCause().getMessage());
        }
        if (r.exit() != 0) {
            throw new RestoreFailedException(
                    tool("iptables-restore") + " exited " + r.exit() + ": " + ToolMessage.of(r));
        }
    }

    @Override
    public Optional<List<String>> chain(Table table, String chain) {
        CommandRunner.Result r = run(null, tool("iptables"), "-w", "5", "-t", table.restoreName(), "-S", chain);
        if (r.exit() != 0) {
            // iptables-nft 1.8.9 says "incompatible" for a missing chain while the table has no base chain yet.
            if (r.stderr().contains("No chain/target/match by that name")
                    || r.stderr().contains("does not exist")
                    || r.stderr().contains("is incompatible")) {
                return Optional.empty();
            }
            throw new IllegalStateException(tool("iptables") + " -t " + table.restoreName() + " -S " + chain
                    + " exited " + r.exit() + ": " + ToolMessage.of(r));
        }
        return Optional.of(lines(r.stdout()));
    }

    @Override
    public List<String> chainNames(Table table) {
        CommandRunner.Result r = run(null, tool("iptables"), "-w", "5", "-t", table.restoreName(), "-S");
        if (r.exit() != 0) {
            throw new IllegalStateException(tool("iptables") + " -t " + table.restoreName() + " -S exited " + r.exit()
                    + ": " + ToolMessage.of(r));
        }
        List<String> out = new ArrayList<>();
        for (String l : lines(r.stdout())) {
            if (l.startsWith("-N ")) {
                out.add(l.substring(3));
            }
        }
        return out;
    }

    @Override
    public String printed(Table table, String chain, String rule) {
        return printer.printed(family, table, chain, rule);
    }

    private CommandRunner.Result run(String stdin, String... argv) {
        List<String> cmd = List.of(argv);
        try {
            return runner.run(cmd, stdin, Duration.ofMinutes(10));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", cmd), e);
        }
    }

    private static List<String> lines(String s) {
        List<String> out = new ArrayList<>();
        for (String l : s.split("\n")) {
            if (!l.isEmpty()) {
                out.add(l);
            }
        }
        return out;
    }
}
