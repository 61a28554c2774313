package io.rulesync.compiler.iptables;

import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.compiler.endpoints.PortInput;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RuleSetAssembly;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.pcollections.TreePMap;

/**
 * The compiled rules of one node for one IP family: an immutable value made of one
 * {@link ServicePortRules} per service port (in port-name order) plus the fixed chains.
 *
 * <p>{@link #update} recompiles only the Services that changed and shares everything else with the
 * previous value, so one endpoint change costs work proportional to that Service, not to the cluster.
 * The one global input is kube-proxy's "large cluster mode" (more than 1000 endpoints drops the
 * per-endpoint comments); when a change crosses that threshold every port is recompiled, exactly as
 * kube-proxy would rewrite every chain.
 */
public final class NodeRules {
    /** kube-proxy's largeClusterEndpointsThreshold. */
    public static final int LARGE_CLUSTER_ENDPOINTS = 1000;

    private final NodeContext node;
    private final ProxySettings settings;
    private final TreePMap<ServicePortName, ServicePortRules> ports;
    private final TreePMap<NamespacedName, List<ServicePortName>> portsByService;
    private final long totalEndpoints;

    private NodeRules(
            NodeContext node,
            ProxySettings settings,
            TreePMap<ServicePortName, ServicePortRules> ports,
            TreePMap<NamespacedName, List<ServicePortName>> portsByService,
            long totalEndpoints) {
        this.node = node;
        this.settings = settings;
        this.ports = ports;
        this.portsByService = portsByService;
        this.totalEndpoints = totalEndpoints;
    }

    static NodeRules compile(ClusterState state, Node node, ProxySettings settings) {
        NodeContext ctx = NodeContext.of(node, settings.family());
        List<PortInput> inputs = new ArrayList<>();
        long total = 0;
        for (Service svc : state.services()) {
            for (PortInput in : PortInput.of(svc, state, settings.family())) {
                inputs.add(in);
                total += in.endpoints().size();
            }
        }
        boolean large = total > LARGE_CLUSTER_ENDPOINTS;
        TreeMap<ServicePortName, ServicePortRules> compiled = new TreeMap<>();
        TreeMap<NamespacedName, List<ServicePortName>> byService = new TreeMap<>();
        for (PortInput in : inputs) {
            compiled.put(
                    in.info().name(), ServicePortCompiler.compile(in.info(), in.endpoints(), ctx, settings, large));
            byService
                    .computeIfAbsent(in.info().name().service(), k -> new ArrayList<>())
                    .add(in.info().name());
        }
        TreePMap<NamespacedName, List<ServicePortName>> index = TreePMap.empty();
        for (Map.Entry<NamespacedName, List<ServicePortName>> e : byService.entrySet()) {
            index = index.plus(e.getKey(), List.copyOf(e.getValue()));
        }
        return new NodeRules(ctx, settings, TreePMap.fromSortedMap(compiled), index, total);
    }

    /**
     * The rules after {@code changed} Services (or their EndpointSlices) changed in {@code state}.
     * Services not named must be unchanged since this value was compiled. A change of the node
     * itself (zone, addresses) recompiles everything.
     */
    public NodeRules update(ClusterState state, Collection<NamespacedName> changed) throws UnknownNodeException {
        Node n = state.node(node.name()).orElseThrow(() -> new UnknownNodeException(node.name()));
        if (!NodeContext.of(n, settings.family()).equals(node)) {
            return compile(state, n, settings);
        }
        TreePMap<ServicePortName, ServicePortRules> newPorts = ports;
        TreePMap<NamespacedName, List<ServicePortName>> newIndex = portsByService;
        long total = totalEndpoints;
        Map<NamespacedName, List<PortInput>> fresh = new HashMap<>();
        for (NamespacedName name : new TreeSet<>(changed)) {
            for (ServicePortName old : portsByService.getOrDefault(name, List.of())) {
                total -= ports.get(old).endpointCount();
                newPorts = newPorts.minus(old);
            }
            newIndex = newIndex.minus(name);
            List<PortInput> inputs = state.service(name)
                    .map(svc -> PortInput.of(svc, state, settings.family()))
                    .orElse(List.of());
            for (PortInput in : inputs) {
                total += in.endpoints().size();
            }
            fresh.put(name, inputs);
        }
        boolean large = total > LARGE_CLUSTER_ENDPOINTS;
        if (large != largeClusterMode()) {
            return compile(state, n, settings);
        }
        for (Map.Entry<NamespacedName, List<PortInput>> e : fresh.entrySet()) {
            List<ServicePortName> names = new ArrayList<>();
            for (PortInput in : e.getValue()) {
                newPorts = newPorts.plus(
                        in.info().name(),
                        ServicePortCompiler.compile(in.info(), in.endpoints(), node, settings, large));
                names.add(in.info().name());
            }
            if (!names.isEmpty()) {
                newIndex = newIndex.plus(e.getKey(), List.copyOf(names));
            }
        }
        return new NodeRules(node, settings, newPorts, newIndex, total);
    }

    public String nodeName() {
        return node.name();
    }

    public ProxySettings settings() {
        return settings;
    }

    public boolean largeClusterMode() {
        return totalEndpoints > LARGE_CLUSTER_ENDPOINTS;
    }

    /** The full rule set: fixed chains first, per-port contributions in port order. */
    public RuleSet ruleSet() {
        List<RuleFragment> fragments = new ArrayList<>(ports.size());
        for (ServicePortRules p : ports.values()) {
            fragments.add(p.rules());
        }
        return RuleSetAssembly.assemble(settings.family(), FixedRules.compile(settings, node), fragments);
    }

    /** The iptables-restore input (ip6tables-restore for IPv6). */
    public String render() {
        return ruleSet().render();
    }
}
