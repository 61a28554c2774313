package io.rulesync.api.history;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.ChainChanges;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * What changed for each node between two versions: chains added, removed and changed, with the
 * rules each changed chain lost and gained. Pure.
 *
 * <p>Two shortcuts keep this cheap at 10k Services and thousands of nodes. Only the units whose
 * fragments differ are assembled (with the fixed unit, which defines the dispatch chains), because
 * the other units contribute the same rules to both versions. And nodes that resolve every changed
 * unit to the same fragments get the same answer, so it is computed once per such group.
 */
public final class VersionDiff {
    /** A chain as a whole (added). */
    public record ChainRules(String chain, List<String> rules) {}

    /** A chain present in both versions whose rules differ. Rules are compared as multisets; a pure reordering says so. */
    public record ChangedChain(String chain, List<String> removedRules, List<String> addedRules, boolean reordered) {}

    public record TableDiff(Table table, List<ChainRules> added, List<String> removed, List<ChangedChain> changed) {}

    public record FamilyDiff(IpFamily family, List<TableDiff> tables) {}

    /** Nodes that see the same change. {@code change}: {@code changed}, {@code joined} or {@code left}. */
    public record NodeGroup(List<String> nodes, String change, List<FamilyDiff> families) {}

    /** The groups, and the nodes (present in both versions) whose rules are equal. */
    public record Result(List<NodeGroup> groups, List<String> unchanged) {}

    private VersionDiff() {}

    public static Result between(ClusterRules from, ClusterRules to, Predicate<String> nodes) {
        RulesDiff diff = RulesDiff.between(from, to, null);
        TreeSet<FamilyUnit> changedUnits = new TreeSet<>();
        for (RulesDiff.FragmentChange c : diff.fragments()) {
            changedUnits.add(new FamilyUnit(c.key().family(), c.key().unit()));
        }
        List<String> joined = new ArrayList<>();
        List<String> left = new ArrayList<>();
        List<String> unchanged = new ArrayList<>();
        Map<List<Optional<RuleFragment>>, List<String>> bySignature = new LinkedHashMap<>();
        TreeSet<String> names = new TreeSet<>(from.nodes().keySet());
        names.addAll(to.nodes().keySet());
        for (String node : names) {
            if (!nodes.test(node)) {
                continue;
            }
            boolean before = from.nodes().containsKey(node);
            boolean after = to.nodes().containsKey(node);
            if (!before || !after) {
                (after ? joined : left).add(node);
                continue;
            }
            List<Optional<RuleFragment>> signature = new ArrayList<>();
            boolean differs = false;
            for (FamilyUnit fu : changedUnits) {
                // The diff is of iptables rules: a change of the IPVS part only is not one.
                Optional<RuleFragment> a =
                        from.resolve(node, fu.family(), fu.unit()).map(VersionDiff::iptablesOnly);
                Optional<RuleFragment> b =
                        to.resolve(node, fu.family(), fu.unit()).map(VersionDiff::iptablesOnly);
                differs |= !a.equals(b);
                signature.add(a);
                signature.add(b);
            }
            if (differs) {
                bySignature.computeIfAbsent(signature, k -> new ArrayList<>()).add(node);
            } else {
                unchanged.add(node);
            }
        }
        List<NodeGroup> groups = new ArrayList<>();
        if (!joined.isEmpty()) {
            groups.add(new NodeGroup(joined, "joined", List.of()));
        }
        if (!left.isEmpty()) {
            groups.add(new NodeGroup(left, "left", List.of()));
        }
        ClusterRules fromPart = restrict(from, changedUnits);
        ClusterRules toPart = restrict(to, changedUnits);
        for (List<String> group : bySignature.values()) {
            String node = group.get(0);
            List<FamilyDiff> families = new ArrayList<>();
            for (IpFamily f : IpFamily.values()) {
                RuleSet before = fromPart.ruleSet(node, f).orElse(null);
                ChainChanges changes =
                        ChainChanges.between(before, toPart.ruleSet(node, f).orElse(null));
                if (!changes.isEmpty()) {
                    families.add(new FamilyDiff(f, tables(changes, before)));
                }
            }
            groups.add(new NodeGroup(List.copyOf(group), "changed", families));
        }
        return new Result(groups, unchanged);
    }

    private static RuleFragment iptablesOnly(RuleFragment f) {
        return f.ipvs().isEmpty() ? f : f.withIpvs(IpvsPart.EMPTY);
    }

    private record FamilyUnit(IpFamily family, Unit unit) implements Comparable<FamilyUnit> {
        @Override
        public int compareTo(FamilyUnit o) {
            int c = family.compareTo(o.family);
            return c != 0 ? c : unit.compareTo(o.unit);
        }
    }

    /** Only the changed units' fragments, with the fixed unit (the dispatch chains' home), and all nodes. */
    private static ClusterRules restrict(ClusterRules rules, TreeSet<FamilyUnit> units) {
        SortedMap<FragmentKey, RuleFragment> kept = new TreeMap<>();
        for (IpFamily f : rules.families()) {
            kept.putAll(rules.unit(f, Unit.FIXED));
        }
        for (FamilyUnit fu : units) {
            kept.putAll(rules.unit(fu.family(), fu.unit()));
        }
        return ClusterRules.of(kept, rules.nodes());
    }

    private static List<TableDiff> tables(ChainChanges changes, RuleSet before) {
        List<TableDiff> out = new ArrayList<>();
        for (ChainChanges.TableChanges t : changes.tables()) {
            if (t.isEmpty()) {
                continue;
            }
            Map<String, Chain> old = new HashMap<>();
            if (before != null) {
                before.chains(t.table()).forEach(c -> old.put(c.name(), c));
            }
            List<ChangedChain> changed = new ArrayList<>();
            for (Chain c : t.changed()) {
                changed.add(changed(Objects.requireNonNull(old.get(c.name())), c));
            }
            out.add(new TableDiff(
                    t.table(),
                    t.added().stream()
                            .map(c -> new ChainRules(c.name(), c.rules()))
                            .toList(),
                    t.removed(),
                    changed));
        }
        return out;
    }

    private static ChangedChain changed(Chain before, Chain after) {
        Map<String, Integer> counts = new HashMap<>();
        before.rules().forEach(r -> counts.merge(r, 1, Integer::sum));
        List<String> added = new ArrayList<>();
        for (String r : after.rules()) {
            if (counts.getOrDefault(r, 0) > 0) {
                counts.merge(r, -1, Integer::sum);
            } else {
                added.add(r);
            }
        }
        List<String> removed = new ArrayList<>();
        Map<String, Integer> remaining = new HashMap<>(counts);
        for (String r : before.rules()) {
            if (remaining.getOrDefault(r, 0) > 0) {
                remaining.merge(r, -1, Integer::sum);
                removed.add(r);
            }
        }
        return new ChangedChain(after.name(), removed, added, removed.isEmpty() && added.isEmpty());
    }
}
