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
import io.rulesync.model.iptables.Hex;
import io.rulesync.model.iptables.Part;
import io.rulesync.model.iptables.Part.CtState;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.Target;
import io.rulesync.model.ipvs.IpvsAssembly;
import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.rules.TopChains;
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
    // IPVS mode's own chains, beside the fixed ones it shares with iptables mode (TopChains).
    private static final String LOAD_BALANCER = "KUBE-LOAD-BALANCER";
    private static final String NODE_PORT = "KUBE-NODE-PORT";
    private static final String SOURCE_RANGES_FIREWALL = "KUBE-SOURCE-RANGES-FIREWALL";
    private static final String IPVS_FILTER = "KUBE-IPVS-FILTER";
    private static final Target MARK_MASQ = new Target.Jump(TopChains.MARK_MASQ);

    /** kube-proxy's default {@code --ipvs-scheduler}. */
    public static final String DEFAULT_SCHEDULER = "rr";

    private IpvsCompiler() {}

    public static IpvsRules compile(
            ClusterState state, String nodeName, ProxySettings settings, String clusterScheduler)
            throws UnknownNodeException {
        String bad = Service.checkIpvsScheduler(clusterScheduler);
        if (bad != null) {
            throw new IllegalArgumentException("scheduler: " + bad);
        }
        Node node = state.node(nodeName).orElseThrow(() -> new UnknownNodeException(nodeName));
        IpFamily family = settings.family();
        NodeContext ctx = NodeContext.of(node, family);
        List<IpvsPart> ports = new ArrayList<>();
        for (Service svc : state.services().stream()
                .sorted(Comparator.comparing(Service::name))
                .toList()) {
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
                loopBacks.add(
                        new IpvsPart.LoopBack(ep.nodeName(), ep.ip() + "," + proto + ":" + ep.port() + "," + ep.ip()));
            }
        }
        List<EndpointInfo> endpoints = in.endpoints().forNode(node.name());
        EndpointCategories categories = EndpointCategories.categorize(endpoints, info, node.name(), node.zone());
        List<RealServer> internal = realServers(categories, info.internalPolicyLocal());
        List<RealServer> external = realServers(categories, info.externalPolicyLocal());
        int persistence = info.affinityTimeoutSeconds();

        sets.add(always(IpvsSet.CLUSTER_IP, entry(info.clusterIP(), proto, info.port())));
        services.add(new IpvsPart.ServiceTemplate(
                info.clusterIP(), info.port(), protocol, scheduler, persistence, internal));
        binds.add(info.clusterIP());

        for (IpAddress ip : info.externalIPs()) {
            sets.add(always(
                    info.externalPolicyLocal() ? IpvsSet.EXTERNAL_IP_LOCAL : IpvsSet.EXTERNAL_IP,
                    entry(ip, proto, info.port())));
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
                    rules.add(filter(
                            null,
                            "KUBE-IPVS-OUT-FILTER",
                            Rule.with()
                                    .source(ip)
                                    .add(new Part.Ipvs(ip, protocol, info.port()))
                                    .then(Target.Verdict.DROP)));
                }
            }
            services.add(new IpvsPart.ServiceTemplate(ip, info.port(), protocol, scheduler, persistence, external));
            binds.add(ip);
        }

        // kube-proxy skips the rest of the port, health-check entry included, on a node without NodePort addresses.
        boolean nodePortOnly = info.nodePort() != 0;
        if (info.nodePort() != 0) {
            // bitmap:port sets hold the port only; the SCTP set holds each node address with it.
            String member = protocol == Protocol.SCTP
                    ? IpvsPart.NODE + ",sctp:" + info.nodePort()
                    : String.valueOf(info.nodePort());
            sets.add(new IpvsPart.SetEntry(nodePortSet(protocol, false), member, true));
            if (info.externalPolicyLocal()) {
                sets.add(new IpvsPart.SetEntry(nodePortSet(protocol, true), member, true));
            }
            services.add(
                    new IpvsPart.ServiceTemplate(null, info.nodePort(), protocol, scheduler, persistence, external));
        }
        if (info.healthCheckNodePort() != 0) {
            sets.add(new IpvsPart.SetEntry(
                    IpvsSet.HEALTH_CHECK_NODE_PORT, String.valueOf(info.healthCheckNodePort()), nodePortOnly));
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
                .sorted()
                .toList();
    }

    private static boolean linkLocal(IpAddress ip) {
        return ip.family() == IpFamily.IPV6
                && ip.toString().toLowerCase(java.util.Locale.ROOT).startsWith("fe80:");
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
    private static Rule.Builder inSet(IpvsSet s, IpFamily f, String flags) {
        return Rule.with().comment(s.comment()).add(new Part.SetMatch(s.name(f), flags));
    }

    private static IpvsPart.Rule nat(IpvsSet requires, String chain, Rule rule) {
        return new IpvsPart.Rule("nat", requires, "-A " + chain + " " + rule.restoreForm());
    }

    private static IpvsPart.Rule filter(IpvsSet requires, String chain, Rule rule) {
        return new IpvsPart.Rule("filter", requires, "-A " + chain + " " + rule.restoreForm());
    }

    /** The nat rules of writeIptablesRules, in its order; those about a set only when the set has members. */
    private static List<IpvsPart.Rule> natRules(ProxySettings settings) {
        IpFamily f = settings.family();
        Hex mark = Hex.parse(settings.masqueradeMark());
        String services = TopChains.SERVICES;
        List<IpvsPart.Rule> nat = new ArrayList<>();
        nat.add(nat(
                null,
                services,
                Rule.with()
                        .source(false, Cidr.parse(f == IpFamily.IPV4 ? "127.0.0.0/8" : "::1/128"))
                        .then(Target.Verdict.RETURN)));
        nat.add(nat(
                IpvsSet.LOOP_BACK,
                TopChains.POSTROUTING,
                inSet(IpvsSet.LOOP_BACK, f, "dst,dst,src").then(new Target.Masquerade(false))));
        nat.add(nat(
                IpvsSet.LOAD_BALANCER,
                services,
                inSet(IpvsSet.LOAD_BALANCER, f, "dst,dst").jump(LOAD_BALANCER)));
        nat.add(nat(
                IpvsSet.LOAD_BALANCER_LOCAL,
                LOAD_BALANCER,
                inSet(IpvsSet.LOAD_BALANCER_LOCAL, f, "dst,dst").then(Target.Verdict.RETURN)));
        nat.add(nodePortRule(f, Protocol.TCP, IpvsSet.NODE_PORT_LOCAL_TCP, "dst", Target.Verdict.RETURN));
        nat.add(nodePortRule(f, Protocol.TCP, IpvsSet.NODE_PORT_TCP, "dst", MARK_MASQ));
        nat.add(nodePortRule(f, Protocol.UDP, IpvsSet.NODE_PORT_LOCAL_UDP, "dst", Target.Verdict.RETURN));
        nat.add(nodePortRule(f, Protocol.UDP, IpvsSet.NODE_PORT_UDP, "dst", MARK_MASQ));
        nat.add(nodePortRule(f, Protocol.SCTP, IpvsSet.NODE_PORT_LOCAL_SCTP, "dst,dst", Target.Verdict.RETURN));
        nat.add(nodePortRule(f, Protocol.SCTP, IpvsSet.NODE_PORT_SCTP, "dst,dst", MARK_MASQ));
        if (settings.masqueradeAll()) {
            nat.add(nat(
                    IpvsSet.CLUSTER_IP,
                    services,
                    inSet(IpvsSet.CLUSTER_IP, f, "dst,dst").then(MARK_MASQ)));
        } else if (settings.localDetector().isPresent()) {
            nat.add(nat(
                    IpvsSet.CLUSTER_IP,
                    services,
                    inSet(IpvsSet.CLUSTER_IP, f, "dst,dst")
                            .source(true, settings.localDetector().get())
                            .then(MARK_MASQ)));
        } else {
            // Without a local-traffic detector kube-proxy matches src,dst: traffic that is its own hairpin.
            nat.add(nat(
                    IpvsSet.CLUSTER_IP,
                    services,
                    inSet(IpvsSet.CLUSTER_IP, f, "src,dst").then(MARK_MASQ)));
        }
        nat.add(nat(
                IpvsSet.EXTERNAL_IP,
                services,
                inSet(IpvsSet.EXTERNAL_IP, f, "dst,dst").then(MARK_MASQ)));
        nat.add(nat(
                IpvsSet.EXTERNAL_IP,
                services,
                inSet(IpvsSet.EXTERNAL_IP, f, "dst,dst")
                        .add(new Part.NotBridged())
                        .add(new Part.AddrType(true, true))
                        .then(Target.Verdict.ACCEPT)));
        nat.add(nat(
                IpvsSet.EXTERNAL_IP,
                services,
                inSet(IpvsSet.EXTERNAL_IP, f, "dst,dst").local(false).then(Target.Verdict.ACCEPT)));
        nat.add(nat(
                IpvsSet.EXTERNAL_IP_LOCAL,
                services,
                inSet(IpvsSet.EXTERNAL_IP_LOCAL, f, "dst,dst")
                        .add(new Part.NotBridged())
                        .add(new Part.AddrType(true, true))
                        .then(Target.Verdict.ACCEPT)));
        nat.add(nat(
                IpvsSet.EXTERNAL_IP_LOCAL,
                services,
                inSet(IpvsSet.EXTERNAL_IP_LOCAL, f, "dst,dst").local(false).then(Target.Verdict.ACCEPT)));
        nat.add(nat(null, services, Rule.with().local(false).jump(NODE_PORT)));
        nat.add(nat(null, LOAD_BALANCER, Rule.with().then(MARK_MASQ)));
        for (IpvsSet s : List.of(IpvsSet.CLUSTER_IP, IpvsSet.LOAD_BALANCER)) {
            nat.add(nat(
                    s,
                    services,
                    Rule.with().add(new Part.SetMatch(s.name(f), "dst,dst")).then(Target.Verdict.ACCEPT)));
        }
        nat.add(nat(
                null,
                TopChains.POSTROUTING,
                Rule.with().add(new Part.Mark(true, mark, mark)).then(Target.Verdict.RETURN)));
        nat.add(nat(null, TopChains.POSTROUTING, Rule.with().then(new Target.SetMark(true, mark))));
        nat.add(nat(
                null,
                TopChains.POSTROUTING,
                Rule.with()
                        .comment("kubernetes service traffic requiring SNAT")
                        .then(new Target.Masquerade(settings.randomFully()))));
        nat.add(nat(null, TopChains.MARK_MASQ, Rule.with().then(new Target.SetMark(false, mark))));
        return nat;
    }

    private static IpvsPart.Rule nodePortRule(IpFamily f, Protocol proto, IpvsSet s, String flags, Target target) {
        // kube-proxy writes -p before the set match, and no -m tcp: the set holds the port.
        return nat(
                s,
                NODE_PORT,
                Rule.with()
                        .add(new Part.Proto(proto))
                        .comment(s.comment())
                        .add(new Part.SetMatch(s.name(f), flags))
                        .then(target));
    }

    /** The filter rules of writeIptablesRules, in its order; the ports' load-balancer drops go after the source-range DROP. */
    private static List<IpvsPart.Rule> filterRules(ProxySettings settings) {
        IpFamily f = settings.family();
        Hex mark = Hex.parse(settings.masqueradeMark());
        List<IpvsPart.Rule> filter = new ArrayList<>();
        filter.add(filter(
                IpvsSet.LOAD_BALANCER_FW,
                TopChains.PROXY_FIREWALL,
                inSet(IpvsSet.LOAD_BALANCER_FW, f, "dst,dst").jump(SOURCE_RANGES_FIREWALL)));
        filter.add(filter(
                IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                SOURCE_RANGES_FIREWALL,
                inSet(IpvsSet.LOAD_BALANCER_SOURCE_CIDR, f, "dst,dst,src").then(Target.Verdict.RETURN)));
        filter.add(filter(
                IpvsSet.LOAD_BALANCER_SOURCE_IP,
                SOURCE_RANGES_FIREWALL,
                inSet(IpvsSet.LOAD_BALANCER_SOURCE_IP, f, "dst,dst,src").then(Target.Verdict.RETURN)));
        filter.add(filter(null, SOURCE_RANGES_FIREWALL, Rule.with().then(Target.Verdict.DROP)));
        filter.add(new IpvsPart.Rule("filter", null, IpvsPart.PORT_RULES));
        filter.add(filter(
                null,
                TopChains.FORWARD,
                Rule.with()
                        .comment("kubernetes forwarding rules")
                        .add(new Part.Mark(false, mark, mark))
                        .then(Target.Verdict.ACCEPT)));
        filter.add(filter(
                null,
                TopChains.FORWARD,
                Rule.with()
                        .comment("kubernetes forwarding conntrack rule")
                        .add(new Part.Conntrack(false, List.of(CtState.RELATED, CtState.ESTABLISHED)))
                        .then(Target.Verdict.ACCEPT)));
        filter.add(filter(
                null, NODE_PORT, inSet(IpvsSet.HEALTH_CHECK_NODE_PORT, f, "dst").then(Target.Verdict.ACCEPT)));
        for (IpvsSet s :
                List.of(IpvsSet.LOAD_BALANCER, IpvsSet.CLUSTER_IP, IpvsSet.EXTERNAL_IP, IpvsSet.EXTERNAL_IP_LOCAL)) {
            filter.add(filter(
                    null,
                    IPVS_FILTER,
                    Rule.with().add(new Part.SetMatch(s.name(f), "dst,dst")).then(Target.Verdict.RETURN)));
        }
        filter.add(filter(
                null,
                IPVS_FILTER,
                Rule.with()
                        .add(new Part.SetMatch(IpvsSet.HEALTH_CHECK_NODE_PORT.name(f), "dst"))
                        .then(Target.Verdict.RETURN)));
        filter.add(filter(
                null,
                IPVS_FILTER,
                Rule.with()
                        .add(new Part.Conntrack(false, List.of(CtState.NEW)))
                        .add(new Part.SetMatch(IpvsSet.IPVS_IPS.name(f), "dst"))
                        .then(new Target.Reject())));
        return filter;
    }
}
