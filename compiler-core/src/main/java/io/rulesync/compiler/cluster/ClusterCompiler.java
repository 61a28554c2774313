package io.rulesync.compiler.cluster;

import io.rulesync.compiler.endpoints.EndpointInfo;
import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.compiler.endpoints.PortEndpoints;
import io.rulesync.compiler.endpoints.PortInput;
import io.rulesync.compiler.endpoints.ServicePortInfo;
import io.rulesync.compiler.iptables.FixedRules;
import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.NodeRules;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.iptables.ServicePortCompiler;
import io.rulesync.compiler.ipvs.IpvsCompiler;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.pcollections.TreePMap;

/**
 * Compiles the rules of every node of a cluster at once, without multiplying the work by the number
 * of nodes: each unit (service port, or the fixed part) is compiled once per distinct node class.
 *
 * <p>A service port's rules depend on the node only through (a) which endpoints are local, when the
 * port uses Local traffic policy (or lists one endpoint under several nodes); (b) the node's zone,
 * when zone hints are in force; (c) whether the node's IP lies in a load-balancer source range.
 * Nodes that run none of the port's endpoints and whose IP is in no source range share a default
 * fragment (one per zone when zones matter); the few nodes that differ get a fragment of their own.
 * {@link io.rulesync.model.rules.ClusterRules#ruleSet} resolves a node to its fragments, and a test
 * checks that this equals compiling that node alone with {@link IptablesCompiler}.
 *
 * <p>Each fragment carries both modes: the iptables rules and the IPVS part of the same unit and
 * node class ({@link IpvsCompiler#portPart}). What IPVS mode needs to know about a node beyond its
 * class (its NodePort addresses, its own endpoints for hairpin entries, its own addresses) the part
 * leaves to {@link io.rulesync.model.ipvs.IpvsAssembly}, so IPVS mode adds no node classes. The nftables part
 * ({@link NftablesCompiler#portPart}) depends on the node through the same three things; the fixed unit's lists each
 * node's NodePort addresses, which {@link io.rulesync.model.nftables.NftAssembly} picks per node.
 */
public final class ClusterCompiler {
    /** A node that runs nothing and has no address: the representative of a default node class. */
    private static final String NO_NODE = "";

    private ClusterCompiler() {}

    public static CompiledCluster compile(ClusterState state, ClusterSettings settings) {
        Map<FragmentKey, RuleFragment> fragments = new TreeMap<>();
        Map<IpFamily, TreePMap<Unit, Integer>> counts = new LinkedHashMap<>();
        Map<NamespacedName, Set<Unit>> index = new TreeMap<>();
        for (IpFamily family : settings.families()) {
            ProxySettings ps = proxySettings(settings, family);
            Nodes nodes = Nodes.of(state, family);
            Map<Unit, PortInput> inputs = new TreeMap<>();
            for (Service svc : state.services()) {
                for (PortInput in : PortInput.of(svc, state, family)) {
                    inputs.put(in.unit(), in);
                    index.computeIfAbsent(svc.name(), k -> new TreeSet<>()).add(in.unit());
                }
            }
            long total = inputs.values().stream()
                    .mapToLong(in -> in.endpoints().size())
                    .sum();
            boolean large = total > NodeRules.LARGE_CLUSTER_ENDPOINTS;
            TreeMap<Unit, Integer> familyCounts = new TreeMap<>();
            fixed(ps, nodes).forEach((v, f) -> fragments.put(new FragmentKey(family, Unit.FIXED, v), f));
            for (PortInput in : inputs.values()) {
                familyCounts.put(in.unit(), in.endpoints().size());
                variants(in, ps, settings.ipvsScheduler(), nodes, large)
                        .forEach((v, f) -> fragments.put(new FragmentKey(family, in.unit(), v), f));
            }
            counts.put(family, TreePMap.fromSortedMap(familyCounts));
        }
        TreePMap<NamespacedName, Set<Unit>> idx = TreePMap.empty();
        for (Map.Entry<NamespacedName, Set<Unit>> e : index.entrySet()) {
            idx = idx.plus(e.getKey(), Set.copyOf(e.getValue()));
        }
        return new CompiledCluster(settings, ClusterRules.of(fragments, nodeZones(state)), counts, idx);
    }

    /**
     * The rules after {@code changedServices} (or their EndpointSlices) changed. A change of the
     * settings or of any Node, or one that moves a family across the large-cluster threshold, is
     * compiled in full, as kube-proxy would.
     */
    static CompiledCluster.Update update(
            CompiledCluster prev,
            ClusterState state,
            ClusterSettings settings,
            Collection<NamespacedName> changedServices,
            boolean nodesChanged) {
        if (nodesChanged || !settings.equals(prev.settings())) {
            return new CompiledCluster.Update(compile(state, settings), null);
        }
        ClusterRules rules = prev.rules();
        Map<IpFamily, TreePMap<Unit, Integer>> counts = new LinkedHashMap<>(prev.endpointCounts());
        TreePMap<NamespacedName, Set<Unit>> index = prev.unitsByService();
        Set<Unit> touched = new TreeSet<>();
        Map<IpFamily, List<PortInput>> fresh = new LinkedHashMap<>();
        for (NamespacedName name : new TreeSet<>(changedServices)) {
            Set<Unit> old = index.getOrDefault(name, Set.of());
            touched.addAll(old);
            Set<Unit> now = new HashSet<>();
            for (IpFamily family : settings.families()) {
                TreePMap<Unit, Integer> c = counts.get(family);
                for (Unit u : old) {
                    for (FragmentKey k : List.copyOf(rules.unit(family, u).keySet())) {
                        rules = rules.with(k, null);
                    }
                    c = c.minus(u);
                }
                List<PortInput> inputs = state.service(name)
                        .map(svc -> PortInput.of(svc, state, family))
                        .orElse(List.of());
                for (PortInput in : inputs) {
                    c = c.plus(in.unit(), in.endpoints().size());
                    now.add(in.unit());
                }
                counts.put(family, c);
                fresh.computeIfAbsent(family, k -> new ArrayList<>()).addAll(inputs);
            }
            touched.addAll(now);
            index = now.isEmpty() ? index.minus(name) : index.plus(name, Set.copyOf(now));
        }
        for (IpFamily family : settings.families()) {
            boolean wasLarge = total(prev.endpointCounts().get(family)) > NodeRules.LARGE_CLUSTER_ENDPOINTS;
            boolean large = total(counts.get(family)) > NodeRules.LARGE_CLUSTER_ENDPOINTS;
            if (large != wasLarge) {
                return new CompiledCluster.Update(compile(state, settings), null);
            }
            ProxySettings ps = proxySettings(settings, family);
            Nodes nodes = Nodes.of(state, family);
            for (PortInput in : fresh.getOrDefault(family, List.of())) {
                for (Map.Entry<Variant, RuleFragment> v :
                        variants(in, ps, settings.ipvsScheduler(), nodes, large).entrySet()) {
                    rules = rules.with(new FragmentKey(family, in.unit(), v.getKey()), v.getValue());
                }
            }
        }
        return new CompiledCluster.Update(new CompiledCluster(settings, rules, counts, index), touched);
    }

    /** kube-proxy's flags for one family of this cluster, with the defaults of a modern node. */
    public static ProxySettings proxySettings(ClusterSettings s, IpFamily family) {
        ProxySettings d = ProxySettings.defaults(family);
        return new ProxySettings(
                family,
                s.clusterCidrs(),
                s.masqueradeAll(),
                ProxySettings.markForBit(s.masqueradeBit()),
                d.localhostNodePorts(),
                d.randomFully(),
                s.nodePortAddresses(),
                d.conntrackTcpBeLiberal());
    }

    /**
     * The fixed unit: one fragment for all nodes, or one per node when its iptables rules depend on
     * the node. Its IPVS part lists the addresses of exactly the nodes that resolve to it.
     */
    private static Map<Variant, RuleFragment> fixed(ProxySettings ps, Nodes nodes) {
        Map<Variant, RuleFragment> out = new TreeMap<>();
        boolean perNode = FixedRules.nodeDependent(ps);
        List<NodeContext> served = perNode ? List.of() : List.copyOf(nodes.all());
        out.put(
                Variant.ALL,
                FixedRules.compile(ps, nodes.synthetic(""))
                        .withIpvs(IpvsCompiler.fixedPart(ps, served))
                        .withNftables(NftablesCompiler.fixedPart(ps, served)));
        if (perNode) {
            for (NodeContext n : nodes.all()) {
                out.put(
                        new Variant(n.name(), Variant.ANY),
                        FixedRules.compile(ps, n)
                                .withIpvs(IpvsCompiler.fixedPart(ps, List.of(n)))
                                .withNftables(NftablesCompiler.fixedPart(ps, List.of(n))));
            }
        }
        return out;
    }

    private static Map<Variant, RuleFragment> variants(
            PortInput in, ProxySettings ps, String scheduler, Nodes nodes, boolean large) {
        ServicePortInfo info = in.info();
        PortEndpoints eps = in.endpoints();
        boolean byLocality = info.usesLocalEndpoints() || !eps.duplicates().isEmpty();
        boolean byZone = zoneHintsInForce(info, eps);
        boolean byFirewall = !info.loadBalancerVIPs().isEmpty()
                && !info.loadBalancerSourceRanges().isEmpty();

        Map<Variant, RuleFragment> out = new TreeMap<>();
        Set<String> zones = byZone ? nodes.zones() : Set.of(Variant.ANY);
        for (String zone : zones) {
            NodeContext representative = nodes.synthetic(zone.equals(Variant.ANY) ? "" : zone);
            out.put(new Variant(Variant.ANY, zone), compile(in, representative, ps, scheduler, large));
        }
        Set<String> special = new TreeSet<>();
        if (byLocality) {
            special.addAll(eps.nodes());
        }
        if (byFirewall) {
            for (NodeContext n : nodes.all()) {
                if (n.primaryIP().isPresent()
                        && inAny(info.loadBalancerSourceRanges(), n.primaryIP().get())) {
                    special.add(n.name());
                }
            }
        }
        for (String name : special) {
            nodes.get(name)
                    .ifPresent(n -> out.put(new Variant(n.name(), Variant.ANY), compile(in, n, ps, scheduler, large)));
        }
        return out;
    }

    /** Every mode's rules of one port for one node class, in one fragment. */
    private static RuleFragment compile(
            PortInput in, NodeContext node, ProxySettings ps, String scheduler, boolean large) {
        return ServicePortCompiler.compile(in.info(), in.endpoints(), node, ps, large)
                .rules()
                .withIpvs(IpvsCompiler.portPart(in, scheduler, node, ps))
                .withNftables(NftablesCompiler.portPart(in, node, ps));
    }

    /** Zone hints decide the cluster endpoints only when every ready endpoint has some. */
    private static boolean zoneHintsInForce(ServicePortInfo info, PortEndpoints eps) {
        if (!info.usesClusterEndpoints()) {
            return false;
        }
        boolean anyReady = false;
        for (EndpointInfo ep : eps.endpoints()) {
            if (ep.ready()) {
                anyReady = true;
                if (ep.zoneHints().isEmpty()) {
                    return false;
                }
            }
        }
        return anyReady;
    }

    private static boolean inAny(List<Cidr> cidrs, IpAddress ip) {
        return cidrs.stream().anyMatch(c -> c.contains(ip));
    }

    private static long total(TreePMap<Unit, Integer> counts) {
        long t = 0;
        for (int c : counts.values()) {
            t += c;
        }
        return t;
    }

    private static Map<String, String> nodeZones(ClusterState state) {
        Map<String, String> out = new TreeMap<>();
        for (Node n : state.nodes()) {
            out.put(n.name(), n.zone());
        }
        return out;
    }

    /** The cluster's nodes as one family's proxier sees them. */
    private record Nodes(Map<String, NodeContext> byName) {
        static Nodes of(ClusterState state, IpFamily family) {
            Map<String, NodeContext> m = new TreeMap<>();
            for (Node n : state.nodes()) {
                m.put(n.name(), NodeContext.of(n, family));
            }
            return new Nodes(m);
        }

        Collection<NodeContext> all() {
            return byName.values();
        }

        Optional<NodeContext> get(String name) {
            return Optional.ofNullable(byName.get(name));
        }

        Set<String> zones() {
            Set<String> out = new TreeSet<>();
            byName.values().forEach(n -> out.add(n.zone()));
            return out;
        }

        NodeContext synthetic(String zone) {
            return new NodeContext(NO_NODE, zone, Optional.empty(), List.of());
        }
    }
}
