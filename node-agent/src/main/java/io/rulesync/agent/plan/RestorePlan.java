package io.rulesync.agent.plan;

import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * One family's {@code iptables-restore --noflush} input that moves the kernel from one rule set to
 * another, touching only what changed, plus what it touched (for verification).
 *
 * <p>Per table, in this order (one atomic transaction):
 * <ol>
 *   <li>declare new chains, chains whose rules changed, and chains to remove: under
 *       {@code --noflush} a declaration creates or flushes exactly that chain;</li>
 *   <li>edit the dispatch chains (KUBE-SERVICES, KUBE-NODEPORTS, ...) rule by rule: {@code -D}
 *       by rule spec, then {@code -I} at the final position;</li>
 *   <li>append the rules of the declared chains;</li>
 *   <li>{@code -X} the removed chains, now that nothing jumps to them.</li>
 * </ol>
 * Chains not in either rule set are never named, so other software's chains and rules survive.
 */
public record RestorePlan(
        String script, Map<Table, List<String>> rewritten, Map<Table, List<String>> removed, int lines) {

    public RestorePlan {
        Objects.requireNonNull(script, "script");
        rewritten = copy(rewritten);
        removed = copy(removed);
    }

    public boolean isEmpty() {
        return lines == 0;
    }

    /** Incremental: {@code before} is what the kernel holds (rulesync's chains), {@code after} what it should. */
    public static RestorePlan between(RuleSet before, RuleSet after) {
        return build(Objects.requireNonNull(before, "before"), after, List.of(), List.of());
    }

    /**
     * Full: declares and fills every chain of {@code after} (so each is flushed first, whatever it
     * held), adds the {@code extra} chains (the canary), and removes {@code stale} ones: chains
     * rulesync owns that the kernel holds but {@code after} does not have.
     */
    public static RestorePlan full(RuleSet after, Collection<TableChain> extra, Collection<TableChain> stale) {
        return build(null, after, extra, stale);
    }

    /** A chain in a table. */
    public record TableChain(Table table, String chain) {}

    private static RestorePlan build(
            RuleSet before, RuleSet after, Collection<TableChain> extra, Collection<TableChain> stale) {
        Objects.requireNonNull(after, "after");
        StringBuilder sb = new StringBuilder();
        Map<Table, List<String>> rewritten = new EnumMap<>(Table.class);
        Map<Table, List<String>> removed = new EnumMap<>(Table.class);
        int lines = 0;
        for (Table t : Table.values()) {
            Map<String, Chain> old = before == null ? Map.of() : byName(before.chains(t));
            Map<String, Chain> now = byName(after.chains(t));
            List<Chain> declare = new ArrayList<>();
            List<String> edits = new ArrayList<>();
            for (Chain c : now.values()) {
                Chain o = old.get(c.name());
                if (before != null && o != null && DispatchChain.of(t, c.name()) != null) {
                    SequenceEdits e = SequenceEdits.between(o.rules(), c.rules());
                    Map<String, Integer> copies = new java.util.HashMap<>();
                    o.rules().forEach(r -> copies.merge(r, 1, Integer::sum));
                    // From the last down, so a position stays right. By rule spec where the rule is
                    // unique (it survives foreign rules inserted above it); by position where a rule
                    // appears twice and -D spec would take the first copy.
                    for (int k = e.deletes().size() - 1; k >= 0; k--) {
                        SequenceEdits.Delete d = e.deletes().get(k);
                        edits.add("-D " + c.name() + " "
                                + (copies.get(d.rule()) == 1 ? d.rule() : Integer.toString(d.index() + 1)));
                    }
                    for (SequenceEdits.Insert i : e.inserts()) {
                        edits.add("-I " + c.name() + " " + (i.index() + 1) + " " + i.rule());
                    }
                } else if (o == null || !o.rules().equals(c.rules())) {
                    declare.add(c);
                }
            }
            TreeSet<String> gone = new TreeSet<>();
            for (String name : old.keySet()) {
                if (!now.containsKey(name)) {
                    gone.add(name);
                }
            }
            for (TableChain s : stale) {
                if (s.table() == t && !now.containsKey(s.chain())) {
                    gone.add(s.chain());
                }
            }
            List<String> extraNames = new ArrayList<>();
            for (TableChain e : extra) {
                if (e.table() == t && !now.containsKey(e.chain())) {
                    extraNames.add(e.chain());
                }
            }
            if (declare.isEmpty() && edits.isEmpty() && gone.isEmpty() && extraNames.isEmpty()) {
                continue;
            }
            sb.append('*').append(t.restoreName()).append('\n');
            for (String e : extraNames) {
                sb.append(':').append(e).append(" - [0:0]\n");
            }
            for (Chain c : declare) {
                sb.append(':').append(c.name()).append(" - [0:0]\n");
            }
            for (String g : gone) {
                sb.append(':').append(g).append(" - [0:0]\n");
            }
            for (String e : edits) {
                sb.append(e).append('\n');
            }
            for (Chain c : declare) {
                for (String r : c.rules()) {
                    sb.append("-A ").append(c.name()).append(' ').append(r).append('\n');
                    lines++;
                }
            }
            for (String g : gone) {
                sb.append("-X ").append(g).append('\n');
            }
            sb.append("COMMIT\n");
            lines += extraNames.size() + declare.size() + 2 * gone.size() + edits.size();
            rewritten.put(t, declare.stream().map(Chain::name).toList());
            removed.put(t, List.copyOf(gone));
        }
        return new RestorePlan(sb.toString(), rewritten, removed, lines);
    }

    private static Map<String, Chain> byName(List<Chain> chains) {
        Map<String, Chain> m = new LinkedHashMap<>();
        for (Chain c : chains) {
            m.put(c.name(), c);
        }
        return m;
    }

    private static <V> Map<Table, List<V>> copy(Map<Table, List<V>> m) {
        Map<Table, List<V>> out = new EnumMap<>(Table.class);
        m.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return java.util.Collections.unmodifiableMap(out);
    }
}
