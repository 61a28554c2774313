package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsAssembly;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.nftables.NftAssembly;
import io.rulesync.model.nftables.NftPart;
import io.rulesync.model.nftables.NftTransaction;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import org.pcollections.TreePMap;

/**
 * The rules of every node of one cluster at one version: fragments by (family, unit, node class),
 * plus each node's zone. It costs what distinct rules cost, not what nodes cost: a 5,000-node
 * cluster whose nodes mostly agree holds little more than a 5-node one. Any node's rule set is
 * assembled on demand ({@link #ruleSet}); every role that renders rules (compiler, agent, api) uses
 * this same resolution, so they cannot disagree.
 */
public final class ClusterRules {
    public static final ClusterRules EMPTY = new ClusterRules(TreePMap.empty(), TreePMap.empty());

    private final TreePMap<FragmentKey, RuleFragment> fragments;
    private final TreePMap<String, String> nodeZones;

    private ClusterRules(TreePMap<FragmentKey, RuleFragment> fragments, TreePMap<String, String> nodeZones) {
        this.fragments = fragments;
        this.nodeZones = nodeZones;
    }

    public static ClusterRules of(Map<FragmentKey, RuleFragment> fragments, Map<String, String> nodeZones) {
        return new ClusterRules(TreePMap.from(fragments), TreePMap.from(nodeZones));
    }

    public ClusterRules with(FragmentKey key, RuleFragment fragment) {
        return new ClusterRules(fragment == null ? fragments.minus(key) : fragments.plus(key, fragment), nodeZones);
    }

    public ClusterRules withNodes(Map<String, String> zones) {
        return new ClusterRules(fragments, TreePMap.from(zones));
    }

    /** Fragments in rule order. */
    public SortedMap<FragmentKey, RuleFragment> fragments() {
        return fragments;
    }

    public Optional<RuleFragment> fragment(FragmentKey key) {
        return Optional.ofNullable(fragments.get(key));
    }

    /** Node name to zone ("" when the node has no zone label). */
    public SortedMap<String, String> nodes() {
        return nodeZones;
    }

    public List<IpFamily> families() {
        List<IpFamily> out = new ArrayList<>(2);
        for (IpFamily f : IpFamily.values()) {
            FragmentKey first = new FragmentKey(f, Unit.FIXED, new Variant("", ""));
            FragmentKey next = fragments.ceilingKey(first);
            if (next != null && next.family() == f) {
                out.add(f);
            }
        }
        return out;
    }

    /** The fragments of one unit and family (all its variants). */
    public SortedMap<FragmentKey, RuleFragment> unit(IpFamily family, Unit unit) {
        return fragments.subMap(
                new FragmentKey(family, unit, new Variant("", "")),
                new FragmentKey(family, unit, new Variant("\uffff", "\uffff")));
    }

    /** One node's rule set for one family; empty when the node is not in this version. */
    public Optional<RuleSet> ruleSet(String node, IpFamily family) {
        return chosen(node, family).map(c -> RuleSetAssembly.assemble(family, c.fixed(), c.ports()));
    }

    /** One node's IPVS configuration for one family, from the same fragments; empty when the node is not in this version. */
    public Optional<IpvsRules> ipvs(String node, IpFamily family) {
        return chosen(node, family)
                .map(c -> IpvsAssembly.assemble(
                        node,
                        family,
                        c.fixed().ipvs(),
                        c.ports().stream().map(RuleFragment::ipvs).toList()));
    }

    /**
     * One node's {@code kube-proxy} table for one family in nftables mode, from the same fragments; empty when the node
     * is not in this version, or the version has no rules of this family.
     *
     * @throws IllegalStateException when the version's fragments were written before nftables mode
     */
    public Optional<NftTransaction> nftables(String node, IpFamily family) {
        if (!families().contains(family)) {
            return Optional.empty();
        }
        return chosen(node, family).map(c -> {
            if (!(c.fixed().nftables() instanceof NftPart.Fixed fixed)) {
                throw new IllegalStateException(
                        "this version was compiled before nftables mode: it has no nftables rules");
            }
            List<NftPart.Port> ports = new ArrayList<>(c.ports().size());
            for (RuleFragment f : c.ports()) {
                if (!(f.nftables() instanceof NftPart.Port p)) {
                    throw new IllegalStateException(
                            "this version was compiled before nftables mode: it has no nftables rules");
                }
                ports.add(p);
            }
            return NftAssembly.table(node, family, fixed, ports);
        });
    }

    /** The fragments a node uses: the fixed unit's, then one per service port, in rule order. */
    private record Chosen(RuleFragment fixed, List<RuleFragment> ports) {}

    private Optional<Chosen> chosen(String node, IpFamily family) {
        String zone = nodeZones.get(node);
        if (zone == null) {
            return Optional.empty();
        }
        RuleFragment fixed = RuleFragment.EMPTY;
        List<RuleFragment> ports = new ArrayList<>();
        Unit current = null;
        List<Map.Entry<FragmentKey, RuleFragment>> variants = new ArrayList<>();
        for (Map.Entry<FragmentKey, RuleFragment> e : fragments.entrySet()) {
            if (e.getKey().family() != family) {
                continue;
            }
            if (current != null && !e.getKey().unit().equals(current)) {
                fixed = take(current, choose(variants, node, zone), fixed, ports);
                variants.clear();
            }
            current = e.getKey().unit();
            variants.add(e);
        }
        if (current != null) {
            fixed = take(current, choose(variants, node, zone), fixed, ports);
        }
        return Optional.of(new Chosen(fixed, ports));
    }

    /** Files a unit's chosen fragment (null: none for this node); returns the fixed fragment. */
    private static RuleFragment take(Unit unit, RuleFragment chosen, RuleFragment fixed, List<RuleFragment> ports) {
        if (unit instanceof Unit.Fixed) {
            return Objects.requireNonNullElse(chosen, RuleFragment.EMPTY);
        }
        if (chosen != null) {
            ports.add(chosen);
        }
        return fixed;
    }

    /**
     * Only what {@code node} can use: the variants that match it (its own, its zone's, any node's)
     * and its own zone. An agent holds this, not the whole cluster; empty when the node is unknown.
     */
    public ClusterRules forNode(String node) {
        String zone = nodeZones.get(node);
        if (zone == null) {
            return EMPTY;
        }
        TreePMap<FragmentKey, RuleFragment> kept = TreePMap.empty();
        for (Map.Entry<FragmentKey, RuleFragment> e : fragments.entrySet()) {
            if (matches(e.getKey().variant(), node, zone)) {
                kept = kept.plus(e.getKey(), e.getValue());
            }
        }
        return new ClusterRules(kept, TreePMap.singleton(node, zone));
    }

    /** Whether a fragment of this variant may be chosen for the node. */
    public static boolean matches(Variant v, String node, String zone) {
        return (v.node().equals(node) || v.node().equals(Variant.ANY))
                && (v.zone().equals(zone) || v.zone().equals(Variant.ANY));
    }

    /** The fragment a node uses for one unit, if any. */
    public Optional<RuleFragment> resolve(String node, IpFamily family, Unit unit) {
        String zone = nodeZones.get(node);
        return zone == null
                ? Optional.empty()
                : Optional.ofNullable(choose(unit(family, unit).entrySet(), node, zone));
    }

    /** The most specific variant: this node and its zone, this node, any node in its zone, any node. */
    static RuleFragment choose(Collection<Map.Entry<FragmentKey, RuleFragment>> variants, String node, String zone) {
        RuleFragment best = null;
        int bestRank = Integer.MAX_VALUE;
        for (Map.Entry<FragmentKey, RuleFragment> e : variants) {
            Variant v = e.getKey().variant();
            if (!matches(v, node, zone)) {
                continue;
            }
            boolean nodeMatch = v.node().equals(node);
            boolean zoneMatch = v.zone().equals(zone);
            int rank = (nodeMatch ? 0 : 2) + (zoneMatch ? 0 : 1);
            if (rank < bestRank) {
                best = e.getValue();
                bestRank = rank;
            }
        }
        return best;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterRules other
                && fragments.equals(other.fragments)
                && nodeZones.equals(other.nodeZones);
    }

    @Override
    public int hashCode() {
        return fragments.hashCode() * 31 + nodeZones.hashCode();
    }

    @Override
    public String toString() {
        return "ClusterRules[" + fragments.size() + " fragments, " + nodeZones.size() + " nodes]";
    }
}
