package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What changed between two versions of a cluster's rules: fragments added, replaced or removed, and
 * nodes added, removed or moved to another zone. Empty means no node's rules changed, so no new
 * version is due.
 */
public record RulesDiff(List<FragmentChange> fragments, List<NodeChange> nodes) {
    public RulesDiff {
        fragments = List.copyOf(fragments);
        nodes = List.copyOf(nodes);
    }

    /** {@code before} null: added; {@code after} null: removed. */
    public record FragmentChange(FragmentKey key, RuleFragment before, RuleFragment after) {
        public FragmentChange {
            Objects.requireNonNull(key, "key");
            if (before == null && after == null) {
                throw new IllegalArgumentException("a change needs a before or an after");
            }
        }
    }

    /** {@code zoneBefore} null: the node is new; {@code zoneAfter} null: the node is gone. */
    public record NodeChange(String node, String zoneBefore, String zoneAfter) {}

    public boolean isEmpty() {
        return fragments.isEmpty() && nodes.isEmpty();
    }

    /**
     * The difference from {@code a} to {@code b}. When {@code touched} is given, only those units
     * can differ (the caller knows what it recompiled) and only they are compared; null compares all.
     */
    public static RulesDiff between(ClusterRules a, ClusterRules b, Collection<Unit> touched) {
        List<FragmentChange> changes = new ArrayList<>();
        if (touched == null) {
            compare(a.fragments(), b.fragments(), changes);
        } else {
            Set<IpFamilyUnit> seen = new HashSet<>();
            for (ClusterRules r : List.of(a, b)) {
                for (IpFamily f : r.families()) {
                    for (Unit u : new TreeSet<>(touched)) {
                        if (seen.add(new IpFamilyUnit(f, u))) {
                            compare(a.unit(f, u), b.unit(f, u), changes);
                        }
                    }
                }
            }
            changes.sort((x, y) -> x.key().compareTo(y.key()));
        }
        List<NodeChange> nodes = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(a.nodes().keySet());
        names.addAll(b.nodes().keySet());
        for (String n : names) {
            String za = a.nodes().get(n);
            String zb = b.nodes().get(n);
            if (!Objects.equals(za, zb)) {
                nodes.add(new NodeChange(n, za, zb));
            }
        }
        return new RulesDiff(changes, nodes);
    }

    private record IpFamilyUnit(IpFamily family, Unit unit) {}

    private static void compare(
            SortedMap<FragmentKey, RuleFragment> a, SortedMap<FragmentKey, RuleFragment> b, List<FragmentChange> out) {
        TreeSet<FragmentKey> keys = new TreeSet<>(a.keySet());
        keys.addAll(b.keySet());
        for (FragmentKey k : keys) {
            RuleFragment fa = a.get(k);
            RuleFragment fb = b.get(k);
            if (!Objects.equals(fa, fb)) {
                out.add(new FragmentChange(k, fa, fb));
            }
        }
    }

    /** Applies this diff to {@code base}: the way an agent or the store moves from one version to the next. */
    public ClusterRules applyTo(ClusterRules base) {
        ClusterRules r = base;
        for (FragmentChange c : fragments) {
            r = r.with(c.key(), c.after());
        }
        if (!nodes.isEmpty()) {
            Map<String, String> zones = new TreeMap<>(r.nodes());
            for (NodeChange n : nodes) {
                if (n.zoneAfter() == null) {
                    zones.remove(n.node());
                } else {
                    zones.put(n.node(), n.zoneAfter());
                }
            }
            r = r.withNodes(zones);
        }
        return r;
    }
}
