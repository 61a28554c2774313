package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a version change means for one node, chain by chain: chains added, chains whose rules
 * changed, chains removed, per table. Deltas travel per node class ({@link RulesDelta}); this is the
 * node's own view of one, which is what an agent writes to its kernel.
 */
public record ChainChanges(List<TableChanges> tables) {
    public ChainChanges {
        tables = List.copyOf(tables);
    }

    /** One table's changes. Added and changed chains carry their full new content. */
    public record TableChanges(Table table, List<Chain> added, List<Chain> changed, List<String> removed) {
        public TableChanges {
            Objects.requireNonNull(table, "table");
            added = List.copyOf(added);
            changed = List.copyOf(changed);
            removed = List.copyOf(removed);
        }

        public boolean isEmpty() {
            return added.isEmpty() && changed.isEmpty() && removed.isEmpty();
        }
    }

    public boolean isEmpty() {
        return tables.stream().allMatch(TableChanges::isEmpty);
    }

    /** The changes that turn {@code before} into {@code after} (either may be empty: a node that came or went). */
    public static ChainChanges between(RuleSet before, RuleSet after) {
        List<TableChanges> out = new ArrayList<>();
        for (Table t : Table.values()) {
            Map<String, Chain> old = byName(before == null ? List.of() : before.chains(t));
            Map<String, Chain> now = byName(after == null ? List.of() : after.chains(t));
            List<Chain> added = new ArrayList<>();
            List<Chain> changed = new ArrayList<>();
            List<String> removed = new ArrayList<>();
            for (Chain c : now.values()) {
                Chain o = old.get(c.name());
                if (o == null) {
                    added.add(c);
                } else if (!o.rules().equals(c.rules())) {
                    changed.add(c);
                }
            }
            for (String name : old.keySet()) {
                if (!now.containsKey(name)) {
                    removed.add(name);
                }
            }
            out.add(new TableChanges(t, added, changed, removed));
        }
        return new ChainChanges(out);
    }

    /** The node's view of a delta applied to {@code base}: its chains added, changed and removed. */
    public static ChainChanges forNode(ClusterRules base, RulesDelta delta, String node, IpFamily family) {
        ClusterRules next = delta.diff().applyTo(base);
        return between(
                base.ruleSet(node, family).orElse(null),
                next.ruleSet(node, family).orElse(null));
    }

    private static Map<String, Chain> byName(List<Chain> chains) {
        Map<String, Chain> m = new LinkedHashMap<>();
        for (Chain c : chains) {
            m.put(c.name(), c);
        }
        return m;
    }
}
