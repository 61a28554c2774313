package io.rulesync.compiler.ipvs;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;

import io.rulesync.compiler.endpoints.EndpointCategories;
import io.rulesync.compiler.endpoints.EndpointInfo;
import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.compiler.endpoints.PortInput;
import io.rulesync.compiler.endpoints.ServicePortInfo;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.iptables.UnknownNodeException;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * kube-proxy's IPVS mode for one node and one IP family (pkg/proxy/ipvs, {@code syncProxyRules}
 * and {@code writeIptablesRules}): a pure function of the cluster state, the node and the settings,
 * with the same endpoint selection as iptables mode ({@link EndpointCategories}).
 *
 * <p>Two inputs differ from kube-proxy's by necessity. kube-proxy takes the node's addresses
 * (NodePort virtual servers, which external IPs to bind) from the host's interfaces; a central
 * compiler has the Node object's addresses of the family instead. And the scheduler is the
 * cluster's, overridable per Service by the {@value Service#IPVS_SCHEDULER_ANNOTATION} annotation,
 * where kube-proxy has one per node.
 */
public final class IpvsCompiler {
    /** kube-proxy's default {@code --ipvs-scheduler}. */
    public static final String DEFAULT_SCHEDULER = "rr";

    private IpvsCompiler() {
    }

    public static IpvsRules compile(ClusterState state, String nodeName, ProxySettings settings, String clusterScheduler)
            throws UnknownNodeException {
        String bad = Service.checkIpvsScheduler(clusterScheduler);
        if (bad != null) {
            throw new IllegalArgumentException("scheduler: " + bad);
        }
        Node node = state.node(nodeName).orElseThrow(() -> new UnknownNodeException(nodeName));
        IpFamily family = settings.family();
        NodeContext ctx = NodeContext.of(node, family);
        Set<IpAddress> nodeAddresses = new HashSet<>(ctx.addresses());
        List<IpAddress> nodePortIPs = nodePortIPs(ctx, settings);

        Map<IpvsSet, SortedSet<String>> sets = new EnumMap<>(IpvsSet.class);
        for (IpvsSet s : IpvsSet.values()) {
            sets.put(s, new TreeSet<>());
        }
        List<VirtualServer> virtualServers = new ArrayList<>();
        SortedSet<IpAddress> bound = new TreeSet<>();
        List<String> outFilterDrops = new ArrayList<>();

        List<Service> services = state.services().stream().sorted(Comparator.comparing(Service::name)).toList();
        for (Service svc : services) {
            String scheduler = svc.ipvsScheduler() != null ? svc.ipvsScheduler() : clusterScheduler;
            for (PortInput in : PortInput.of(svc, state, family)) {
                ServicePortInfo info = in.info();
                Protocol protocol = info.name().protocol();
                String proto = protocol.lower();
                List<EndpointInfo> endpoints = in.endpoints().forNode(node.name());
                for (EndpointInfo ep : endpoints) {
                    if (ep.isLocalTo(node.name())) {
                        // Hairpin: a pod reaching itself through the service is masqueraded, whatever its state.
                        sets.get(IpvsSet.LOOP_BACK).add(ep.ip() + "," + proto + ":" + ep.port() + "," + ep.ip());
                    }
                }
                EndpointCategories categories = EndpointCategories.categorize(endpoints, info, node.name(), ctx.zone());
                List<RealServer> internal = realServers(categories, info.internalPolicyLocal());
                List<RealServer> external = realServers(categories, info.externalPolicyLocal());
                int persistence = info.affinityTimeoutSeconds();

                sets.get(IpvsSet.CLUSTER_IP).add(entry(info.clusterIP(), proto, info.port()));
                virtualServers.add(new VirtualServer(info.clusterIP(), info.port(), protocol, scheduler, persistence, internal));
                bound.add(info.clusterIP());

                for (IpAddress ip : info.externalIPs()) {
                    sets.get(info.externalPolicyLocal() ? IpvsSet.EXTERNAL_IP_LOCAL : IpvsSet.EXTERNAL_IP)
                            .add(entry(ip, proto, info.port()));
                    virtualServers.add(new VirtualServer(ip, info.port(), protocol, scheduler, persistence, external));
                    if (!nodeAddresses.contains(ip)) {
                        bound.add(ip);
                    }
                }

                for (IpAddress ip : info.loadBalancerVIPs()) {
                    String e = entry(ip, proto, info.port());
                    sets.get(IpvsSet.LOAD_BALANCER).add(e);
                    if (info.externalPolicyLocal()) {
                        sets.get(IpvsSet.LOAD_BALANCER_LOCAL).add(e);
                    }
                    if (!info.loadBalancerSourceRanges().isEmpty()) {
                        sets.get(IpvsSet.LOAD_BALANCER_FW).add(e);
                        boolean nodeInRanges = false;
                        for (Cidr c : info.loadBalancerSourceRanges()) {
                            sets.get(IpvsSet.LOAD_BALANCER_SOURCE_CIDR).add(e + "," + c);
                            nodeInRanges |= ctx.primaryIP().map(c::contains).orElse(false);
                        }
                        if (nodeInRanges) {
                            sets.get(IpvsSet.LOAD_BALANCER_SOURCE_IP).add(e + "," + ip);
                        } else {
                            // The node may not reach the LB IP itself: its own traffic would bypass the source ranges.
                            outFilterDrops.add("-A KUBE-IPVS-OUT-FILTER -s " + ip + " -m ipvs --vaddr " + ip + " --vproto " + proto
                                    + " --vport " + info.port() + " -j DROP");
                        }
                    }
                    virtualServers.add(new VirtualServer(ip, info.port(), protocol, scheduler, persistence, external));
                    if (!nodeAddresses.contains(ip)) {
                        bound.add(ip);
                    }
                }

                if (info.nodePort() != 0) {
                    if (nodePortIPs.isEmpty()) {
                        continue; // kube-proxy skips the rest of the port, health-check entry included
                    }
                    boolean local = info.externalPolicyLocal();
                    for (String e : nodePortEntries(protocol, nodePortIPs, info.nodePort())) {
                        sets.get(nodePortSet(protocol, false)).add(e);
                        if (local) {
                            sets.get(nodePortSet(protocol, true)).add(e);
                        }
                    }
                    for (IpAddress ip : nodePortIPs) {
                        virtualServers.add(new VirtualServer(ip, info.nodePort(), protocol, scheduler, persistence, external));
                    }
                }
                if (info.healthCheckNodePort() != 0) {
                    sets.get(IpvsSet.HEALTH_CHECK_NODE_PORT).add(String.valueOf(info.healthCheckNodePort()));
                }
            }
        }
        bound.forEach(ip -> sets.get(IpvsSet.IPVS_IPS).add(ip.toString()));
        outFilterDrops.sort(Comparator.naturalOrder());
        return new IpvsRules(family, bound, virtualServers, sets, natRules(settings, sets),
                filterRules(settings, sets, outFilterDrops));
    }

    /** Endpoint selection as {@code syncEndpoint}: Local policy uses the local endpoints, or the cluster's when there are none. */
    private static List<RealServer> realServers(EndpointCategories c, boolean onlyLocal) {
        List<EndpointInfo> chosen = onlyLocal && !c.local().isEmpty() ? c.local() : c.cluster();
        return chosen.stream().map(ep -> new RealServer(ep.ip(), ep.port(), 1)).toList();
    }

    /**
     * The node's addresses NodePorts listen on: all of the family but loopback ones (and IPv6
     * link-local ones), or those in {@code --nodeport-addresses} when it is set.
     */
    private static List<IpAddress> nodePortIPs(NodeContext ctx, ProxySettings settings) {
        List<Cidr> cidrs = settings.nodePortCidrs();
        return ctx.addresses().stream()
                .filter(ip -> !ip.isLoopback())
                .filter(ip -> cidrs.isEmpty() ? !linkLocal(ip) : cidrs.stream().anyMatch(c -> c.contains(ip)))
                .sorted().toList();
    }

    private static boolean linkLocal(IpAddress ip) {
        return ip.family() == IpFamily.IPV6 && ip.toString().toLowerCase(java.util.Locale.ROOT).startsWith("fe80:");
    }

    private static String entry(IpAddress ip, String proto, int port) {
        return ip + "," + proto + ":" + port;
    }

    private static List<String> nodePortEntries(Protocol protocol, List<IpAddress> nodeIPs, int nodePort) {
        if (protocol != Protocol.SCTP) {
            return List.of(String.valueOf(nodePort)); // bitmap:port sets hold the port only
        }
        return nodeIPs.stream().map(ip -> entry(ip, "sctp", nodePort)).toList();
    }

    private static IpvsSet nodePortSet(Protocol protocol, boolean local) {
        return switch (protocol) {
            case TCP -> local ? IpvsSet.NODE_PORT_LOCAL_TCP : IpvsSet.NODE_PORT_TCP;
            case UDP -> local ? IpvsSet.NODE_PORT_LOCAL_UDP : IpvsSet.NODE_PORT_UDP;
            case SCTP -> local ? IpvsSet.NODE_PORT_LOCAL_SCTP : IpvsSet.NODE_PORT_SCTP;
        };
    }

    /** {@code -m comment --comment "..." -m set --match-set NAME FLAGS} for one set. */
    private static String match(IpvsSet s, IpFamily f, String flags) {
        return "-m comment --comment " + s.quotedComment() + " -m set --match-set " + s.name(f) + " " + flags;
    }

    /** The nat rules of writeIptablesRules, in its order; rules about a set only when the set has members. */
    private static List<String> natRules(ProxySettings settings, Map<IpvsSet, SortedSet<String>> sets) {
        IpFamily f = settings.family();
        String mark = settings.masqueradeMark();
        List<String> nat = new ArrayList<>();
        nat.add("-A KUBE-SERVICES -s " + (f == IpFamily.IPV4 ? "127.0.0.0/8" : "::1/128") + " -j RETURN");
        if (!sets.get(IpvsSet.LOOP_BACK).isEmpty()) {
            nat.add("-A KUBE-POSTROUTING " + match(IpvsSet.LOOP_BACK, f, "dst,dst,src") + " -j MASQUERADE");
        }
        if (!sets.get(IpvsSet.LOAD_BALANCER).isEmpty()) {
            nat.add("-A KUBE-SERVICES " + match(IpvsSet.LOAD_BALANCER, f, "dst,dst") + " -j KUBE-LOAD-BALANCER");
        }
        if (!sets.get(IpvsSet.LOAD_BALANCER_LOCAL).isEmpty()) {
            nat.add("-A KUBE-LOAD-BALANCER " + match(IpvsSet.LOAD_BALANCER_LOCAL, f, "dst,dst") + " -j RETURN");
        }
        nodePortRule(nat, sets, f, "tcp", IpvsSet.NODE_PORT_LOCAL_TCP, "dst", "RETURN");
        nodePortRule(nat, sets, f, "tcp", IpvsSet.NODE_PORT_TCP, "dst", "KUBE-MARK-MASQ");
        nodePortRule(nat, sets, f, "udp", IpvsSet.NODE_PORT_LOCAL_UDP, "dst", "RETURN");
        nodePortRule(nat, sets, f, "udp", IpvsSet.NODE_PORT_UDP, "dst", "KUBE-MARK-MASQ");
        nodePortRule(nat, sets, f, "sctp", IpvsSet.NODE_PORT_LOCAL_SCTP, "dst,dst", "RETURN");
        nodePortRule(nat, sets, f, "sctp", IpvsSet.NODE_PORT_SCTP, "dst,dst", "KUBE-MARK-MASQ");
        if (!sets.get(IpvsSet.CLUSTER_IP).isEmpty()) {
            String clusterIP = "-A KUBE-SERVICES " + match(IpvsSet.CLUSTER_IP, f, "");
            if (settings.masqueradeAll()) {
                nat.add(clusterIP + "dst,dst -j KUBE-MARK-MASQ");
            } else if (settings.localDetector().isPresent()) {
                nat.add(clusterIP + "dst,dst ! -s " + settings.localDetector().get() + " -j KUBE-MARK-MASQ");
            } else {
                // Without a local-traffic detector kube-proxy matches src,dst: traffic that is its own hairpin.
                nat.add(clusterIP + "src,dst -j KUBE-MARK-MASQ");
            }
        }
        if (!sets.get(IpvsSet.EXTERNAL_IP).isEmpty()) {
            String ext = "-A KUBE-SERVICES " + match(IpvsSet.EXTERNAL_IP, f, "dst,dst");
            nat.add(ext + " -j KUBE-MARK-MASQ");
            nat.add(ext + " -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT");
            nat.add(ext + " -m addrtype --dst-type LOCAL -j ACCEPT");
        }
        if (!sets.get(IpvsSet.EXTERNAL_IP_LOCAL).isEmpty()) {
            String ext = "-A KUBE-SERVICES " + match(IpvsSet.EXTERNAL_IP_LOCAL, f, "dst,dst");
            nat.add(ext + " -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT");
            nat.add(ext + " -m addrtype --dst-type LOCAL -j ACCEPT");
        }
        nat.add("-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT");
        nat.add("-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ");
        for (IpvsSet s : List.of(IpvsSet.CLUSTER_IP, IpvsSet.LOAD_BALANCER)) {
            if (!sets.get(s).isEmpty()) {
                nat.add("-A KUBE-SERVICES -m set --match-set " + s.name(f) + " dst,dst -j ACCEPT");
            }
        }
        nat.add("-A KUBE-POSTROUTING -m mark ! --mark " + mark + "/" + mark + " -j RETURN");
        nat.add("-A KUBE-POSTROUTING -j MARK --xor-mark " + mark);
        nat.add("-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE"
                + (settings.randomFully() ? " --random-fully" : ""));
        nat.add("-A KUBE-MARK-MASQ -j MARK --or-mark " + mark);
        return nat;
    }

    private static void nodePortRule(List<String> nat, Map<IpvsSet, SortedSet<String>> sets, IpFamily f, String proto, IpvsSet s,
            String flags, String target) {
        if (!sets.get(s).isEmpty()) {
            nat.add("-A KUBE-NODE-PORT -p " + proto + " " + match(s, f, flags) + " -j " + target);
        }
    }

    /** The filter rules of writeIptablesRules, in its order. */
    private static List<String> filterRules(ProxySettings settings, Map<IpvsSet, SortedSet<String>> sets, List<String> outFilterDrops) {
        IpFamily f = settings.family();
        String mark = settings.masqueradeMark();
        List<String> filter = new ArrayList<>();
        if (!sets.get(IpvsSet.LOAD_BALANCER_FW).isEmpty()) {
            filter.add("-A KUBE-PROXY-FIREWALL " + match(IpvsSet.LOAD_BALANCER_FW, f, "dst,dst") + " -j KUBE-SOURCE-RANGES-FIREWALL");
        }
        if (!sets.get(IpvsSet.LOAD_BALANCER_SOURCE_CIDR).isEmpty()) {
            filter.add("-A KUBE-SOURCE-RANGES-FIREWALL " + match(IpvsSet.LOAD_BALANCER_SOURCE_CIDR, f, "dst,dst,src") + " -j RETURN");
        }
        if (!sets.get(IpvsSet.LOAD_BALANCER_SOURCE_IP).isEmpty()) {
            filter.add("-A KUBE-SOURCE-RANGES-FIREWALL " + match(IpvsSet.LOAD_BALANCER_SOURCE_IP, f, "dst,dst,src") + " -j RETURN");
        }
        filter.add("-A KUBE-SOURCE-RANGES-FIREWALL -j DROP");
        filter.addAll(outFilterDrops);
        filter.add("-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding rules\" -m mark --mark " + mark + "/" + mark + " -j ACCEPT");
        filter.add("-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT");
        filter.add("-A KUBE-NODE-PORT " + match(IpvsSet.HEALTH_CHECK_NODE_PORT, f, "dst") + " -j ACCEPT");
        for (IpvsSet s : List.of(IpvsSet.LOAD_BALANCER, IpvsSet.CLUSTER_IP, IpvsSet.EXTERNAL_IP, IpvsSet.EXTERNAL_IP_LOCAL)) {
            filter.add("-A KUBE-IPVS-FILTER -m set --match-set " + s.name(f) + " dst,dst -j RETURN");
        }
        filter.add("-A KUBE-IPVS-FILTER -m set --match-set " + IpvsSet.HEALTH_CHECK_NODE_PORT.name(f) + " dst -j RETURN");
        filter.add("-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set " + IpvsSet.IPVS_IPS.name(f) + " dst -j REJECT");
        return filter;
    }
}
