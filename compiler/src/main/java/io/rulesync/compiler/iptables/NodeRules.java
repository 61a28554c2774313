package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
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
    static final int LARGE_CLUSTER_ENDPOINTS = 1000;

    private final NodeContext node;
    private final ProxySettings settings;
    private final TreePMap<ServicePortName, ServicePortRules> ports;
    private final TreePMap<NamespacedName, List<ServicePortName>> portsByService;
    private final long totalEndpoints;

    private NodeRules(NodeContext node, ProxySettings settings, TreePMap<ServicePortName, ServicePortRules> ports,
            TreePMap<NamespacedName, List<ServicePortName>> portsByService, long totalEndpoints) {
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
            for (PortInput in : inputsOf(svc, state, ctx, settings.family())) {
                inputs.add(in);
                total += in.endpoints().size();
            }
        }
        boolean large = total > LARGE_CLUSTER_ENDPOINTS;
        TreeMap<ServicePortName, ServicePortRules> compiled = new TreeMap<>();
        TreeMap<NamespacedName, List<ServicePortName>> byService = new TreeMap<>();
        for (PortInput in : inputs) {
            compiled.put(in.info().name(), ServicePortCompiler.compile(in.info(), in.endpoints(), ctx, settings, large));
            byService.computeIfAbsent(in.info().name().service(), k -> new ArrayList<>()).add(in.info().name());
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
                    .map(svc -> inputsOf(svc, state, node, settings.family()))
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
                newPorts = newPorts.plus(in.info().name(),
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

    /** The compiled service ports, in port-name order. */
    public Collection<ServicePortRules> servicePorts() {
        return ports.values();
    }

    /** The full rule set: fixed chains first, per-port contributions in port order. */
    public RuleSet ruleSet() {
        List<Chain> filter = new ArrayList<>(6);
        filter.add(new Chain(ChainNames.SERVICES, concat(DispatchChain.FILTER_SERVICES, List.of())));
        filter.add(new Chain(ChainNames.EXTERNAL_SERVICES, concat(DispatchChain.FILTER_EXTERNAL_SERVICES, List.of())));
        filter.add(new Chain(ChainNames.FORWARD, forwardRules()));
        filter.add(new Chain(ChainNames.NODEPORTS, concat(DispatchChain.FILTER_NODEPORTS, List.of())));
        filter.add(new Chain(ChainNames.PROXY_FIREWALL, concat(DispatchChain.FILTER_PROXY_FIREWALL, List.of())));
        if (settings.effectiveLocalhostNodePorts()) {
            // Localhost NodePorts need route_localnet, which lets martian packets in; this is
            // kube-proxy's (and kubelet's) mitigation for that hole.
            filter.add(new Chain(ChainNames.FIREWALL, List.of("-m comment --comment \"block incoming localnet connections\""
                    + " -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP")));
        }

        List<Chain> nat = new ArrayList<>();
        nat.add(new Chain(ChainNames.SERVICES, concat(DispatchChain.NAT_SERVICES, nodePortJumps())));
        nat.add(new Chain(ChainNames.NODEPORTS, concat(DispatchChain.NAT_NODEPORTS, List.of())));
        String mark = settings.masqueradeMark();
        nat.add(new Chain(ChainNames.POSTROUTING, List.of(
                "-m mark ! --mark " + mark + "/" + mark + " -j RETURN",
                // Clear the mark so that a packet re-entering the stack is not masqueraded twice.
                "-j MARK --xor-mark " + mark,
                "-m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE"
                        + (settings.randomFully() ? " --random-fully" : ""))));
        nat.add(new Chain(ChainNames.MARK_MASQ, List.of("-j MARK --or-mark " + mark)));
        for (ServicePortRules p : ports.values()) {
            nat.addAll(p.chains());
        }
        return new RuleSet(settings.family(), filter, nat);
    }

    /** The iptables-restore input (ip6tables-restore for IPv6). */
    public String render() {
        return ruleSet().render();
    }

    private List<String> concat(DispatchChain chain, List<String> tail) {
        List<String> out = new ArrayList<>();
        for (ServicePortRules p : ports.values()) {
            out.addAll(p.dispatchRules(chain));
        }
        out.addAll(tail);
        return out;
    }

    private List<String> forwardRules() {
        String mark = settings.masqueradeMark();
        List<String> rules = new ArrayList<>(3);
        if (!settings.conntrackTcpBeLiberal()) {
            // Without tcp_be_liberal, out-of-window packets are INVALID and would reset connections.
            rules.add("-m conntrack --ctstate INVALID -j DROP");
        }
        rules.add("-m comment --comment \"kubernetes forwarding rules\" -m mark --mark " + mark + "/" + mark + " -j ACCEPT");
        rules.add("-m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT");
        return rules;
    }

    /** The last rules of nat KUBE-SERVICES: hand traffic for the node's own addresses to KUBE-NODEPORTS. */
    private List<String> nodePortJumps() {
        String comment = "-m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" ";
        List<Cidr> cidrs = settings.nodePortCidrs();
        boolean ipv6 = settings.family() == IpFamily.IPV6;
        boolean localhost = settings.effectiveLocalhostNodePorts();
        if (cidrs.isEmpty()) {
            String destinations = "-m addrtype --dst-type LOCAL";
            // Localhost NodePorts never work on IPv6, and on IPv4 only with route_localnet.
            if (ipv6) {
                destinations += " ! -d ::1/128";
            } else if (!localhost) {
                destinations += " ! -d 127.0.0.0/8";
            }
            return List.of(comment + destinations + " -j " + ChainNames.NODEPORTS);
        }
        // The node's addresses stand in for its interfaces' addresses, which a central compiler
        // cannot see; the loopback address is on every node.
        TreeSet<IpAddress> candidates = new TreeSet<>(node.addresses());
        candidates.add(IpAddress.parse(ipv6 ? "::1" : "127.0.0.1"));
        List<String> out = new ArrayList<>();
        for (IpAddress ip : candidates) {
            if (cidrs.stream().noneMatch(c -> c.contains(ip))) {
                continue;
            }
            if (ip.isLoopback() && (ipv6 || !localhost)) {
                continue;
            }
            out.add(comment + "-d " + ip + " -j " + ChainNames.NODEPORTS);
        }
        return out;
    }

    private static List<PortInput> inputsOf(Service svc, ClusterState state, NodeContext node, IpFamily family) {
        List<ServicePortInfo> infos = ServicePortInfo.of(svc, family);
        if (infos.isEmpty()) {
            return List.of();
        }
        Map<ServicePortName, List<EndpointInfo>> endpoints =
                EndpointCollector.collect(svc.name(), state.slicesOf(svc.name()), family, node.name());
        List<PortInput> out = new ArrayList<>(infos.size());
        for (ServicePortInfo info : infos) {
            out.add(new PortInput(info, endpoints.getOrDefault(info.name(), List.of())));
        }
        return out;
    }

    private record PortInput(ServicePortInfo info, List<EndpointInfo> endpoints) {
    }
}
