package io.rulesync.agent.apply;

import io.rulesync.agent.plan.RestorePlan;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A packet filter held in memory, for {@code --dry-run}: it runs restore input with
 * iptables-restore's semantics (declaring flushes, {@code -D} needs a matching rule, {@code -I}
 * needs a valid position, {@code -X} needs an unreferenced chain, all or nothing), so a dry-run
 * agent goes through the same plan, verification and acks as a real one. When given a directory it
 * writes, after every restore, the node's whole rules ({@code NAME.rules}) and the last restore
 * input ({@code NAME.last-restore}).
 */
public final class MemoryNetfilter implements Netfilter {
    private static final Set<String> NAT_BUILTINS = Set.of("PREROUTING", "INPUT", "OUTPUT", "POSTROUTING");
    private static final Set<String> FILTER_BUILTINS = Set.of("INPUT", "FORWARD", "OUTPUT");

    private final IpFamily family;
    private final Path dir;
    private final String name;
    private final Map<Table, LinkedHashMap<String, List<String>>> tables = empty();
    private final Map<Table, Map<String, Integer>> references =
            new EnumMap<>(Map.of(Table.FILTER, new java.util.HashMap<>(), Table.NAT, new java.util.HashMap<>()));

    /** {@code dir} may be null: keep the rules in memory only. */
    public MemoryNetfilter(IpFamily family, Path dir, String name) {
        this.family = family;
        this.dir = dir;
        this.name = name;
    }

    @Override
    public IpFamily family() {
        return family;
    }

    @Override
    public String mode() {
        return "dry-run";
    }

    @Override
    public synchronized void restore(String script) throws RestoreFailedException {
        // Undo log instead of a copy: a node's tables hold ~300k rules at 10k Services.
        Map<RestorePlan.TableChain, List<String>> undo = new LinkedHashMap<>();
        Table table = null;
        int lineNo = 0;
        for (String line : script.split("\n")) {
            lineNo++;
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                if (line.startsWith("*")) {
                    table = line.equals("*nat") ? Table.NAT : line.equals("*filter") ? Table.FILTER : null;
                    if (table == null) {
                        throw new IllegalArgumentException("unknown table " + line.substring(1));
                    }
                } else if (line.equals("COMMIT")) {
                    table = null;
                } else if (table == null) {
                    throw new IllegalArgumentException("command outside a table");
                } else {
                    run(table, line, undo);
                }
            } catch (IllegalArgumentException e) {
                undo.forEach((tc, rules) -> {
                    List<String> now = tables.get(tc.table()).get(tc.chain());
                    if (now != null) {
                        now.forEach(r -> count(tc.table(), r, -1));
                    }
                    if (rules == null) {
                        tables.get(tc.table()).remove(tc.chain());
                    } else {
                        tables.get(tc.table()).put(tc.chain(), rules);
                        rules.forEach(r -> count(tc.table(), r, +1));
                    }
                });
                throw new RestoreFailedException("line " + lineNo + " failed: " + e.getMessage());
            }
        }
        write(script);
    }

    private void run(Table table, String line, Map<RestorePlan.TableChain, List<String>> undo) {
        LinkedHashMap<String, List<String>> t = tables.get(table);
        if (line.startsWith(":")) {
            String chain = line.substring(1, line.indexOf(' ') < 0 ? line.length() : line.indexOf(' '));
            remember(t, table, chain, undo);
            List<String> old = t.put(chain, new ArrayList<>());
            if (old != null) {
                old.forEach(r -> count(table, r, -1));
            }
            return;
        }
        String[] head = line.split(" ", 3);
        String op = head[0];
        String chain = head.length > 1 ? head[1] : "";
        remember(t, table, chain, undo);
        List<String> rules = t.get(chain);
        if (rules == null) {
            throw new IllegalArgumentException("no chain " + chain + " in " + table.restoreName());
        }
        switch (op) {
            case "-A" -> rules.add(count(table, checkTarget(t, head[2]), +1));
            case "-D" -> {
                if (head[2].matches("[0-9]+")) {
                    int pos = Integer.parseInt(head[2]);
                    if (pos < 1 || pos > rules.size()) {
                        throw new IllegalArgumentException("Index of deletion too big");
                    }
                    count(table, rules.remove(pos - 1), -1);
                } else if (rules.remove(head[2])) {
                    count(table, head[2], -1);
                } else {
                    throw new IllegalArgumentException("Bad rule (does a matching rule exist in that chain?)");
                }
            }
            case "-I" -> {
                String[] posAndRule = head[2].split(" ", 2);
                int pos = Integer.parseInt(posAndRule[0]);
                if (pos < 1 || pos > rules.size() + 1) {
                    throw new IllegalArgumentException("Index of insertion too big");
                }
                rules.add(pos - 1, count(table, checkTarget(t, posAndRule[1]), +1));
            }
            case "-X" -> {
                if (builtins(table).contains(chain)) {
                    throw new IllegalArgumentException("cannot delete built-in chain " + chain);
                }
                if (!rules.isEmpty()) {
                    throw new IllegalArgumentException("chain " + chain + " is not empty");
                }
                if (references.get(table).getOrDefault(chain, 0) > 0) {
                    throw new IllegalArgumentException("chain " + chain + " is still referenced");
                }
                t.remove(chain);
            }
            default -> throw new IllegalArgumentException("unsupported command " + op);
        }
    }

    /** Keeps the count of rules that jump to each chain (what -X must check) as rules come and go. */
    private String count(Table table, String rule, int delta) {
        String target = jumpTarget(rule);
        if (target != null) {
            references.get(table).merge(target, delta, (a, b) -> a + b == 0 ? null : a + b);
        }
        return rule;
    }

    private static String jumpTarget(String rule) {
        int j = rule.lastIndexOf("-j ");
        if (j < 0) {
            return null;
        }
        String target = rule.substring(j + 3).split(" ", 2)[0];
        return target.startsWith("KUBE-") ? target : null;
    }

    private static void remember(
            Map<String, List<String>> t, Table table, String chain, Map<RestorePlan.TableChain, List<String>> undo) {
        RestorePlan.TableChain key = new RestorePlan.TableChain(table, chain);
        if (!undo.containsKey(key)) {
            List<String> old = t.get(chain);
            undo.put(key, old == null ? null : new ArrayList<>(old));
        }
    }

    private static String checkTarget(Map<String, List<String>> t, String rule) {
        String target = jumpTarget(rule);
        if (target != null && !t.containsKey(target)) {
            throw new IllegalArgumentException("jump to missing chain " + target);
        }
        return rule;
    }

    @Override
    public synchronized Optional<List<String>> chain(Table table, String chain) {
        List<String> rules = tables.get(table).get(chain);
        if (rules == null) {
            return Optional.empty();
        }
        List<String> out = new ArrayList<>(rules.size() + 1);
        out.add((builtins(table).contains(chain) ? "-P " + chain + " ACCEPT" : "-N " + chain));
        for (String r : rules) {
            out.add("-A " + chain + " " + r);
        }
        return Optional.of(out);
    }

    @Override
    public synchronized List<String> chainNames(Table table) {
        return tables.get(table).keySet().stream()
                .filter(c -> !builtins(table).contains(c))
                .toList();
    }

    @Override
    public String printed(Table table, String chain, String rule) {
        return "-A " + chain + " " + rule;
    }

    /** Everything held, in iptables-save's shape (for the dry-run file and for tests). */
    public synchronized String dump() {
        StringBuilder sb = new StringBuilder();
        for (Table table : Table.values()) {
            sb.append('*').append(table.restoreName()).append('\n');
            tables.get(table)
                    .forEach((c, rules) -> sb.append(':')
                            .append(c)
                            .append(builtins(table).contains(c) ? " ACCEPT" : " -")
                            .append(" [0:0]\n"));
            tables.get(table)
                    .forEach((c, rules) -> rules.forEach(r ->
                            sb.append("-A ").append(c).append(' ').append(r).append('\n')));
            sb.append("COMMIT\n");
        }
        return sb.toString();
    }

    private void write(String script) {
        if (dir == null) {
            return;
        }
        try {
            Files.createDirectories(dir);
            replace(dir.resolve(name + ".rules"), dump());
            replace(dir.resolve(name + ".last-restore"), script);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write dry-run rules to " + dir, e);
        }
    }

    private static void replace(Path target, String content) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Set<String> builtins(Table t) {
        return t == Table.NAT ? NAT_BUILTINS : FILTER_BUILTINS;
    }

    private static Map<Table, LinkedHashMap<String, List<String>>> empty() {
        Map<Table, LinkedHashMap<String, List<String>>> m = new EnumMap<>(Table.class);
        for (Table t : Table.values()) {
            LinkedHashMap<String, List<String>> chains = new LinkedHashMap<>();
            for (String b : builtins(t).stream().sorted().toList()) {
                chains.put(b, new ArrayList<>());
            }
            m.put(t, chains);
        }
        return m;
    }
}
