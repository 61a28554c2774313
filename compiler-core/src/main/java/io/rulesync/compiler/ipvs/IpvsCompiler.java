package io.rulesync.compiler.ipvs;

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
import io.rulesync.model.ipvs.IpvsAssembly;
import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

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
        List<IpvsPart> ports = new ArrayList<>();
        for (Service svc : state.services().stream().sorted(Comparator.comparing(Service::name)).toList()) {
            for (PortInput in : PortInput.of(svc, state, family)) {
                ports.add(portPart(in, clusterScheduler, ctx, settings));
            }
        }
        return IpvsAssembly.assemble(nodeName, family, fixedPart(settings, List.of(ctx)), ports);
    }

    /**
     * What one service port contributes on {@code node}, leaving open what {@link IpvsAssembly}
     * fills in per node. The node matters only through its local endpoints, zone and primary IP,
     * so a node class's representative gives every node of the class the same part.
     */
    public static IpvsPart portPart(PortInput in, String clusterScheduler, NodeContext node, ProxySettings settings) {
        ServicePortInfo info = in.info();
        String scheduler = in.ipvsScheduler() != null ? in.ipvsScheduler() : clusterScheduler;
        Protocol protocol = info.name().protocol();
        String proto = protocol.lower();
        List<IpvsPart.ServiceTemplate> services = new ArrayList<>();
        List<IpvsPart.SetEntry> sets = new ArrayList<>();
        List<IpvsPart.LoopBack> loopBacks = new ArrayList<>();
        List<IpAddress> binds = new ArrayList<>();
        List<IpvsPart.Rule> rules = new ArrayList<>();

        // Hairpin: a pod reaching itself through the service is masqueraded, whatever its state.
        List<EndpointInfo> copies = new ArrayList<>(in.endpoints().endpoints());
        in.endpoints().duplicates().values().forEach(copies::addAll);
        for (EndpointInfo ep : copies) {
            if (!ep.nodeName().isEmpty()) {
                loopBacks.add(new IpvsPart.LoopBack(ep.nodeName(), ep.ip() + "," + proto + ":" + ep.port() + "," + ep.ip()));
            }
        }
        List<EndpointInfo> endpoints = in.endpoints().forNode(node.name());
        EndpointCategories categories = EndpointCategories.categorize(endpoints, info, node.name(), node.zone());
        List<RealServer> internal = realServers(categories, info.internalPolicyLocal());
        List<RealServer> external = realServers(categories, info.externalPolicyLocal());
        int persistence = info.affinityTimeoutSeconds();

        sets.add(always(IpvsSet.CLUSTER_IP, entry(info.clusterIP(), proto, info.port())));
        services.add(new IpvsPart.ServiceTemplate(info.clusterIP(), info.port(), protocol, scheduler, persistence, internal));
        binds.add(info.clusterIP());

        for (IpAddress ip : info.externalIPs()) {
            sets.add(always(info.externalPolicyLocal() ? IpvsSet.EXTERNAL_IP_LOCAL : IpvsSet.EXTERNAL_IP, entry(ip, proto, info.port())));
            services.add(new IpvsPart.ServiceTemplate(ip, info.port(), protocol, scheduler, persistence, external));
            binds.add(ip);
        }

        for (IpAddress ip : info.loadBalancerVIPs()) {
            String e = entry(ip, proto, info.port());
            sets.add(always(IpvsSet.LOAD_BALANCER, e));
            if (info.externalPolicyLocal()) {
                sets.add(always(IpvsSet.LOAD_BALANCER_LOCAL, e));
            }
            if (!info.loadBalancerSourceRanges().isEmpty()) {
                sets.add(always(IpvsSet.LOAD_BALANCER_FW, e));
                boolean nodeInRanges = false;
                for (Cidr c : info.loadBalancerSourceRanges()) {
                    sets.add(always(IpvsSet.LOAD_BALANCER_SOURCE_CIDR, e + "," + c));
                    nodeInRanges |= node.primaryIP().map(c::contains).orElse(false);
                }
                if (nodeInRanges) {
                    sets.add(always(IpvsSet.LOAD_BALANCER_SOURCE_IP, e + "," + ip));
                } else {
                    // The node may not reach the LB IP itself: its own traffic would bypass the source ranges.
                    rules.add(new IpvsPart.Rule("filter", null, "-A KUBE-IPVS-OUT-FILTER -s " + ip + " -m ipvs --vaddr " + ip
                            + " --vproto " + proto + " --vport " + info.port() + " -j DROP"));
                }
            }
            services.add(new IpvsPart.ServiceTemplate(ip, info.port(), protocol, scheduler, persistence, external));
            binds.add(ip);
        }

        // kube-proxy skips the rest of the port, health-check entry included, on a node without NodePort addresses.
        boolean nodePortOnly = info.nodePort() != 0;
        if (info.nodePort() != 0) {
            // bitmap:port sets hold the port only; the SCTP set holds each node address with it.
            String member = protocol == Protocol.SCTP ? IpvsPart.NODE + ",sctp:" + info.nodePort() : String.valueOf(info.nodePort());
            sets.add(new IpvsPart.SetEntry(nodePortSet(protocol, false), member, true));
            if (info.externalPolicyLocal()) {
                sets.add(new IpvsPart.SetEntry(nodePortSet(protocol, true), member, true));
            }
            services.add(new IpvsPart.ServiceTemplate(null, info.nodePort(), protocol, scheduler, persistence, external));
        }
        if (info.healthCheckNodePort() != 0) {
            sets.add(new IpvsPart.SetEntry(IpvsSet.HEALTH_CHECK_NODE_PORT, String.valueOf(info.healthCheckNodePort()), nodePortOnly));
        }
        return new IpvsPart(services, sets, loopBacks, binds, rules, List.of()).sorted();
    }

    /**
     * The fixed unit's part for the nodes it serves: their addresses, and the fixed iptables rules of
     * {@code writeIptablesRules} in its order, each with the set that must have members.
     */
    public static IpvsPart fixedPart(ProxySettings settings, Collection<NodeContext> nodes) {
        List<IpvsPart.NodeAddresses> addresses = new ArrayList<>();
        for (NodeContext n : nodes) {
            if (!n.name().isEmpty()) {
                addresses.add(new IpvsPart.NodeAddresses(n.name(), n.addresses(), nodePortIPs(n, settings)));
            }
        }
        List<IpvsPart.Rule> rules = new ArrayList<>(natRules(settings));
        rules.addAll(filterRules(settings));
        return new IpvsPart(List.of(), List.of(), List.of(), List.of(), rules, addresses).sorted();
    }

    private static IpvsPart.SetEntry always(IpvsSet set, String member) {
        return new IpvsPart.SetEntry(set, member, false);
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

    private static IpvsPart.Rule nat(IpvsSet requires, String rule) {
        return new IpvsPart.Rule("nat", requires, rule);
    }

    private static IpvsPart.Rule filter(IpvsSet requires, String rule) {
        return new IpvsPart.Rule("filter", requires, rule);
    }

    /** The nat rules of writeIptablesRules, in its order; those about a set only when the set has members. */
    private static List<IpvsPart.Rule> natRules(ProxySettings settings) {
        IpFamily f = settings.family();
        String mark = settings.masqueradeMark();
        List<IpvsPart.Rule> nat = new ArrayList<>();
        nat.add(nat(null, "-A KUBE-SERVICES -s " + (f == IpFamily.IPV4 ? "127.0.0.0/8" : "::1/128") + " -j RETURN"));
        nat.add(nat(IpvsSet.LOOP_BACK, "-A KUBE-POSTROUTING " + match(IpvsSet.LOOP_BACK, f, "dst,dst,src") + " -j MASQUERADE"));
        nat.add(nat(IpvsSet.LOAD_BALANCER, "-A KUBE-SERVICES " + match(IpvsSet.LOAD_BALANCER, f, "dst,dst") + " -j KUBE-LOAD-BALANCER"));
        nat.add(nat(IpvsSet.LOAD_BALANCER_LOCAL, "-A KUBE-LOAD-BALANCER " + match(IpvsSet.LOAD_BALANCER_LOCAL, f, "dst,dst") + " -j RETURN"));
        nat.add(nodePortRule(f, "tcp", IpvsSet.NODE_PORT_LOCAL_TCP, "dst", "RETURN"));
        nat.add(nodePortRule(f, "tcp", IpvsSet.NODE_PORT_TCP, "dst", "KUBE-MARK-MASQ"));
        nat.add(nodePortRule(f, "udp", IpvsSet.NODE_PORT_LOCAL_UDP, "dst", "RETURN"));
        nat.add(nodePortRule(f, "udp", IpvsSet.NODE_PORT_UDP, "dst", "KUBE-MARK-MASQ"));
        nat.add(nodePortRule(f, "sctp", IpvsSet.NODE_PORT_LOCAL_SCTP, "dst,dst", "RETURN"));
        nat.add(nodePortRule(f, "sctp", IpvsSet.NODE_PORT_SCTP, "dst,dst", "KUBE-MARK-MASQ"));
        String clusterIP = "-A KUBE-SERVICES " + match(IpvsSet.CLUSTER_IP, f, "");
        if (settings.masqueradeAll()) {
            nat.add(nat(IpvsSet.CLUSTER_IP, clusterIP + "dst,dst -j KUBE-MARK-MASQ"));
        } else if (settings.localDetector().isPresent()) {
            nat.add(nat(IpvsSet.CLUSTER_IP, clusterIP + "dst,dst ! -s " + settings.localDetector().get() + " -j KUBE-MARK-MASQ"));
        } else {
            // Without a local-traffic detector kube-proxy matches src,dst: traffic that is its own hairpin.
            nat.add(nat(IpvsSet.CLUSTER_IP, clusterIP + "src,dst -j KUBE-MARK-MASQ"));
        }
        String ext = "-A KUBE-SERVICES " + match(IpvsSet.EXTERNAL_IP, f, "dst,dst");
        nat.add(nat(IpvsSet.EXTERNAL_IP, ext + " -j KUBE-MARK-MASQ"));
        nat.add(nat(IpvsSet.EXTERNAL_IP, ext + " -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT"));
        nat.add(nat(IpvsSet.EXTERNAL_IP, ext + " -m addrtype --dst-type LOCAL -j ACCEPT"));
        String extLocal = "-A KUBE-SERVICES " + match(IpvsSet.EXTERNAL_IP_LOCAL, f, "dst,dst");
        nat.add(nat(IpvsSet.EXTERNAL_IP_LOCAL, extLocal + " -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT"));
        nat.add(nat(IpvsSet.EXTERNAL_IP_LOCAL, extLocal + " -m addrtype --dst-type LOCAL -j ACCEPT"));
        nat.add(nat(null, "-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT"));
        nat.add(nat(null, "-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ"));
        for (IpvsSet s : List.of(IpvsSet.CLUSTER_IP, IpvsSet.LOAD_BALANCER)) {
            nat.add(nat(s, "-A KUBE-SERVICES -m set --match-set " + s.name(f) + " dst,dst -j ACCEPT"));
        }
        nat.add(nat(null, "-A KUBE-POSTROUTING -m mark ! --mark " + mark + "/" + mark + " -j RETURN"));
        nat.add(nat(null, "-A KUBE-POSTROUTING -j MARK --xor-mark " + mark));
        nat.add(nat(null, "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE"
                + (settings.randomFully() ? " --random-fully" : "")));
        nat.add(nat(null, "-A KUBE-MARK-MASQ -j MARK --or-mark " + mark));
        return nat;
    }

    private static IpvsPart.Rule nodePortRule(IpFamily f, String proto, IpvsSet s, String flags, String target) {
        return nat(s, "-A KUBE-NODE-PORT -p " + proto + " " + match(s, f, flags) + " -j " + target);
    }

    /** The filter rules of writeIptablesRules, in its order; the ports' load-balancer drops go after the source-range DROP. */
    private static List<IpvsPart.Rule> filterRules(ProxySettings settings) {
        IpFamily f = settings.family();
        String mark = settings.masqueradeMark();
        List<IpvsPart.Rule> filter = new ArrayList<>();
        filter.add(filter(IpvsSet.LOAD_BALANCER_FW, "-A KUBE-PROXY-FIREWALL " + match(IpvsSet.LOAD_BALANCER_FW, f, "dst,dst")
                + " -j KUBE-SOURCE-RANGES-FIREWALL"));
        filter.add(filter(IpvsSet.LOAD_BALANCER_SOURCE_CIDR, "-A KUBE-SOURCE-RANGES-FIREWALL "
                + match(IpvsSet.LOAD_BALANCER_SOURCE_CIDR, f, "dst,dst,src") + " -j RETURN"));
        filter.add(filter(IpvsSet.LOAD_BALANCER_SOURCE_IP, "-A KUBE-SOURCE-RANGES-FIREWALL "
                + match(IpvsSet.LOAD_BALANCER_SOURCE_IP, f, "dst,dst,src") + " -j RETURN"));
        filter.add(filter(null, "-A KUBE-SOURCE-RANGES-FIREWALL -j DROP"));
        filter.add(filter(null, IpvsPart.PORT_RULES));
        filter.add(filter(null, "-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding rules\" -m mark --mark " + mark + "/" + mark
                + " -j ACCEPT"));
        filter.add(filter(null, "-A KUBE-FORWARD -m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate "
                + "RELATED,ESTABLISHED -j ACCEPT"));
        filter.add(filter(null, "-A KUBE-NODE-PORT " + match(IpvsSet.HEALTH_CHECK_NODE_PORT, f, "dst") + " -j ACCEPT"));
        for (IpvsSet s : List.of(IpvsSet.LOAD_BALANCER, IpvsSet.CLUSTER_IP, IpvsSet.EXTERNAL_IP, IpvsSet.EXTERNAL_IP_LOCAL)) {
            filter.add(filter(null, "-A KUBE-IPVS-FILTER -m set --match-set " + s.name(f) + " dst,dst -j RETURN"));
        }
        filter.add(filter(null, "-A KUBE-IPVS-FILTER -m set --match-set " + IpvsSet.HEALTH_CHECK_NODE_PORT.name(f) + " dst -j RETURN"));
        filter.add(filter(null, "-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set " + IpvsSet.IPVS_IPS.name(f)
                + " dst -j REJECT"));
        return filter;
    }
}
