package io.rulesync.agent.apply;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Table;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The kernel's packet filter through the iptables tools ({@code iptables-restore --noflush},
 * {@code iptables -S CHAIN}), optionally inside a named network namespace ({@code ip netns exec}),
 * which is how tests and labs run a node without touching the host.
 */
public final class IptablesNetfilter implements Netfilter {
    /** How the kernel prints a rule the compiler wrote (iptables-save's canonical form). */
    @FunctionalInterface
    public interface Printer {
        String printed(IpFamily family, Table table, String chain, String rule);
    }

    private final IpFamily family;
    private final List<String> prefix;
    private final Printer printer;

    /** {@code netns} null: the agent's own namespace (the node's). */
    public IptablesNetfilter(IpFamily family, String netns, Printer printer) {
        this.family = family;
        this.prefix = netns == null ? List.of() : List.of("ip", "netns", "exec", netns);
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
        Result r = run(script, tool("iptables-restore"), "--noflush", "-w", "5");
        if (r.exit != 0) {
            throw new RestoreFailedException(tool("iptables-restore") + " exited " + r.exit + ": " + r.stderr.strip());
        }
    }

    @Override
    public Optional<List<String>> chain(Table table, String chain) {
        Result r = run(null, tool("iptables"), "-w", "5", "-t", table.restoreName(), "-S", chain);
        if (r.exit != 0) {
            // iptables-nft 1.8.9 says "incompatible" for a missing chain while the table has no base chain yet.
            if (r.stderr.contains("No chain/target/match by that name") || r.stderr.contains("does not exist")
                    || r.stderr.contains("is incompatible")) {
                return Optional.empty();
            }
            throw new IllegalStateException(tool("iptables") + " -t " + table.restoreName() + " -S " + chain + " exited " + r.exit
                    + ": " + r.stderr.strip());
        }
        return Optional.of(lines(r.stdout));
    }

    @Override
    public List<String> chainNames(Table table) {
        Result r = run(null, tool("iptables"), "-w", "5", "-t", table.restoreName(), "-S");
        if (r.exit != 0) {
            throw new IllegalStateException(tool("iptables") + " -t " + table.restoreName() + " -S exited " + r.exit + ": " + r.stderr.strip());
        }
        List<String> out = new ArrayList<>();
        for (String l : lines(r.stdout)) {
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

    private record Result(int exit, String stdout, String stderr) {
    }

    private Result run(String stdin, String... argv) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(argv));
        try {
            Process p = new ProcessBuilder(cmd).start();
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            try (OutputStream in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return new Result(-1, "", String.join(" ", cmd) + " timed out");
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", cmd), e);
        }
    }

    /** On its own thread: the common pool has one thread on 2 cores, and stdout and stderr must drain together. */
    private static CompletableFuture<String> drain(InputStream s) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try (s) {
                f.complete(new String(s.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                f.complete("");
            }
        }, "iptables-output");
        t.setDaemon(true);
        t.start();
        return f;
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
