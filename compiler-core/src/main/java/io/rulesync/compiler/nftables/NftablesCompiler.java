package io.rulesync.compiler.nftables;

import io.rulesync.compiler.endpoints.EndpointCategories;
import io.rulesync.compiler.endpoints.EndpointInfo;
import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.compiler.endpoints.PortInput;
import io.rulesync.compiler.endpoints.ServicePortInfo;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.iptables.UnknownNodeException;
import io.rulesync.compiler.nftables.NftOp.AddChain;
import io.rulesync.compiler.nftables.NftOp.AddElement;
import io.rulesync.compiler.nftables.NftOp.AddMap;
import io.rulesync.compiler.nftables.NftOp.AddRule;
import io.rulesync.compiler.nftables.NftOp.AddSet;
import io.rulesync.compiler.nftables.NftOp.AddTable;
import io.rulesync.compiler.nftables.NftOp.BaseChain;
import io.rulesync.compiler.nftables.NftOp.FlushChain;
import io.rulesync.compiler.nftables.NftOp.FlushSet;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * kube-proxy's nftables mode for one node and family: the {@code kube-proxy} table a full sync writes, as an
 * {@code nft -f} transaction. Conformant with kube-proxy v1.33.6 (its base-chain layout, shared with v1.34+, puts the
 * "no endpoints" and ClusterIP checks after DNAT and the source-range checks before it; the internal masquerade rule
 * still names the port, as before v1.34).
 *
 * <p>Where a full sync differs from process to process, this writes the steady state: no {@code add}+{@code delete} of
 * the base chains (kube-proxy's first sync after a start only), no {@code drop} of unallocated ClusterIPs (written only
 * when the ServiceCIDRs are known, which the cluster's settings do not carry), and Services in name order where
 * kube-proxy's order is a Go map's. The mark is written as kube-proxy's own tests write it ({@code 0x4000}); the kernel
 * holds the same number either way.
 */
public final class NftablesCompiler {
    static final String CLUSTER_IPS = "cluster-ips";
    static final String NODEPORT_IPS = "nodeport-ips";
    static final String SERVICE_IPS = "service-ips";
    static final String SERVICE_NODEPORTS = "service-nodeports";
    static final String NO_ENDPOINT_SERVICES = "no-endpoint-services";
    static final String NO_ENDPOINT_NODEPORTS = "no-endpoint-nodeports";
    static final String FIREWALL_IPS = "firewall-ips";
    static final String MARK_FOR_MASQUERADE = "mark-for-masquerade";
    static final String REJECT_CHAIN = "reject-chain";

    private NftablesCompiler() {
    }

    public static NftTransaction compile(ClusterState state, String nodeName, ProxySettings settings) throws UnknownNodeException {
        Node node = state.node(nodeName).orElseThrow(() -> new UnknownNodeException(nodeName));
        IpFamily family = settings.family();
        NodeContext ctx = NodeContext.of(node, family);
        Syntax s = new Syntax(family);
        List<NftOp> ops = new ArrayList<>();
        String mark = "0x" + Long.toHexString(Long.decode(settings.masqueradeMark()));
        boolean nodePortsEverywhere = settings.nodePortAddresses().stream().anyMatch(c -> c.family() == family && c.prefix() == 0);
        prologue(ops, s, mark, nodePortsEverywhere, nodePortIps(ctx, settings, family));
        for (Service svc : state.services()) {
            for (PortInput in : PortInput.of(svc, state, family)) {
                servicePort(ops, s, in, ctx, settings);
            }
        }
        return new NftTransaction(family, ops);
    }

    /** The table's fixed part: base chains and their jumps, the dispatch maps, the checks and masquerading. */
    private static void prologue(List<NftOp> ops, Syntax s, String mark, boolean nodePortsEverywhere, List<IpAddress> nodePortIps) {
        ops.add(new AddTable());
        chain(ops, new AddChain("filter-prerouting-pre-dnat", new BaseChain("filter", "prerouting", -110), null));
        chain(ops, new AddChain("filter-output-pre-dnat", new BaseChain("filter", "output", -110), null));
        chain(ops, new AddChain("filter-input", new BaseChain("filter", "input", 0), null));
        chain(ops, new AddChain("filter-forward", new BaseChain("filter", "forward", 0), null));
        chain(ops, new AddChain("filter-output", new BaseChain("filter", "output", 0), null));
        chain(ops, new AddChain("nat-prerouting", new BaseChain("nat", "prerouting", -100), null));
        chain(ops, new AddChain("nat-output", new BaseChain("nat", "output", -100), null));
        chain(ops, new AddChain("nat-postrouting", new BaseChain("nat", "postrouting", 100), null));
        chain(ops, new AddChain("nodeport-endpoints-check"));
        ops.add(new AddRule("filter-input", "ct state new jump nodeport-endpoints-check"));
        chain(ops, new AddChain("service-endpoints-check"));
        ops.add(new AddRule("filter-input", "ct state new jump service-endpoints-check"));
        ops.add(new AddRule("filter-forward", "ct state new jump service-endpoints-check"));
        ops.add(new AddRule("filter-output", "ct state new jump service-endpoints-check"));
        chain(ops, new AddChain("firewall-check"));
        ops.add(new AddRule("filter-prerouting-pre-dnat", "ct state new jump firewall-check"));
        ops.add(new AddRule("filter-output-pre-dnat", "ct state new jump firewall-check"));
        chain(ops, new AddChain("services"));
        ops.add(new AddRule("nat-output", "jump services"));
        ops.add(new AddRule("nat-prerouting", "jump services"));
        chain(ops, new AddChain("masquerading"));
        ops.add(new AddRule("nat-postrouting", "jump masquerading"));
        chain(ops, new AddChain("cluster-ips-check"));
        ops.add(new AddRule("filter-forward", "ct state new jump cluster-ips-check"));
        ops.add(new AddRule("filter-output", "ct state new jump cluster-ips-check"));
        chain(ops, new AddChain(MARK_FOR_MASQUERADE));
        ops.add(new AddRule(MARK_FOR_MASQUERADE, "mark set mark or " + mark));
        ops.add(new AddRule("masquerading", "mark and " + mark + " == 0 return"));
        ops.add(new AddRule("masquerading", "mark set mark xor " + mark));
        ops.add(new AddRule("masquerading", "masquerade fully-random"));
        ops.add(new AddSet(CLUSTER_IPS, s.addrType(), List.of(), 0, "Active ClusterIPs"));
        ops.add(new AddRule("cluster-ips-check", s.daddr() + " @" + CLUSTER_IPS + " reject comment \"Reject traffic to invalid ports of ClusterIPs\""));
        if (!nodePortsEverywhere) {
            ops.add(new AddSet(NODEPORT_IPS, s.addrType(), List.of(), 0, "IPs that accept NodePort traffic"));
            ops.add(new FlushSet(NODEPORT_IPS));
            for (IpAddress ip : nodePortIps) {
                ops.add(new AddElement(NODEPORT_IPS, ip.toString(), null, null));
            }
        }
        ops.add(new AddMap(NO_ENDPOINT_SERVICES, s.addrType() + " . inet_proto . inet_service",
                "vmap to drop or reject packets to services with no endpoints"));
        ops.add(new AddMap(NO_ENDPOINT_NODEPORTS, "inet_proto . inet_service",
                "vmap to drop or reject packets to service nodeports with no endpoints"));
        chain(ops, new AddChain(REJECT_CHAIN, null, "helper for @no-endpoint-services / @no-endpoint-nodeports"));
        ops.add(new AddRule(REJECT_CHAIN, "reject"));
        ops.add(new AddRule("service-endpoints-check", s.daddr() + " . meta l4proto . th dport vmap @" + NO_ENDPOINT_SERVICES));
        ops.add(new AddRule("nodeport-endpoints-check", (nodePortsEverywhere ? s.daddr() + " != " + s.loopback() : s.daddr() + " @" + NODEPORT_IPS)
                + " meta l4proto . th dport vmap @" + NO_ENDPOINT_NODEPORTS));
        ops.add(new AddMap(FIREWALL_IPS, s.addrType() + " . inet_proto . inet_service",
                "destinations that are subject to LoadBalancerSourceRanges"));
        ops.add(new AddRule("firewall-check", s.daddr() + " . meta l4proto . th dport vmap @" + FIREWALL_IPS));
        ops.add(new AddMap(SERVICE_IPS, s.addrType() + " . inet_proto . inet_service", "ClusterIP, ExternalIP and LoadBalancer IP traffic"));
        ops.add(new AddMap(SERVICE_NODEPORTS, "inet_proto . inet_service", "NodePort traffic"));
        ops.add(new AddRule("services", s.daddr() + " . meta l4proto . th dport vmap @" + SERVICE_IPS));
        ops.add(new AddRule("services", nodePortsEverywhere
                ? "fib daddr type local " + s.daddr() + " != " + s.loopback() + " meta l4proto . th dport vmap @" + SERVICE_NODEPORTS
                : s.daddr() + " @" + NODEPORT_IPS + " meta l4proto . th dport vmap @" + SERVICE_NODEPORTS));
    }

    /**
     * The node addresses that take NodePort traffic: those in {@code --nodeport-addresses}, or the node's primary address
     * when none is given (nftables mode's default, unlike iptables mode's every local address); never loopback.
     */
    static List<IpAddress> nodePortIps(NodeContext node, ProxySettings settings, IpFamily family) {
        List<Cidr> cidrs = settings.nodePortAddresses().stream().filter(c -> c.family() == family).toList();
        if (cidrs.isEmpty()) {
            return node.primaryIP().filter(ip -> !ip.isLoopback()).map(List::of).orElse(List.of());
        }
        return node.addresses().stream().filter(ip -> !ip.isLoopback() && cidrs.stream().anyMatch(c -> c.contains(ip))).toList();
    }

    /** One service port: its chains, its map and set elements, then its rules, in kube-proxy's order. */
    private static void servicePort(List<NftOp> ops, Syntax s, PortInput in, NodeContext node, ProxySettings settings) {
        ServicePortInfo svc = in.info();
        String name = svc.name().toString();
        String proto = svc.name().protocol().lower();
        String hashed = NftNames.servicePort(svc.name());
        String clusterChain = "service-" + hashed;
        String localChain = "local-" + hashed;
        String externalChain = "external-" + hashed;
        String firewallChain = "firewall-" + hashed;
        EndpointCategories eps = EndpointCategories.categorize(in.endpoints().forNode(node.name()), svc, node.name(), node.zone());
        boolean usesClusterChain = !eps.cluster().isEmpty() && svc.usesClusterEndpoints();
        boolean usesLocalChain = !eps.local().isEmpty() && svc.usesLocalEndpoints();
        boolean hasEndpoints = eps.hasAny();
        String internalChain = svc.internalPolicyLocal() ? localChain : clusterChain;
        boolean hasInternalEndpoints = svc.internalPolicyLocal() ? !eps.local().isEmpty() : hasEndpoints;
        boolean hasExternalEndpoints = svc.externalPolicyLocal() ? !eps.local().isEmpty() : hasEndpoints;
        boolean usesExternalChain = hasEndpoints && svc.externallyAccessible();
        boolean usesFirewallChain = !svc.loadBalancerVIPs().isEmpty() && !svc.loadBalancerSourceRanges().isEmpty();

        for (EndpointInfo ep : eps.allReachable()) {
            chain(ops, new AddChain("endpoint-" + NftNames.endpoint(svc.name(), ep)));
        }
        if (usesClusterChain) {
            chain(ops, new AddChain(clusterChain));
        }
        if (usesLocalChain) {
            chain(ops, new AddChain(localChain));
        }
        if (usesExternalChain) {
            chain(ops, new AddChain(externalChain));
        }

        // The ClusterIP.
        String port = Integer.toString(svc.port());
        ops.add(new AddElement(CLUSTER_IPS, svc.clusterIP().toString(), null, null));
        String clusterKey = svc.clusterIP() + " . " + proto + " . " + port;
        if (hasInternalEndpoints) {
            ops.add(new AddElement(SERVICE_IPS, clusterKey, null, "goto " + internalChain));
        } else {
            ops.add(new AddElement(NO_ENDPOINT_SERVICES, clusterKey, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
        }
        // External IPs, then load-balancer IPs (kube-proxy's order), and the NodePort.
        if (usesFirewallChain) {
            chain(ops, new AddChain(firewallChain));
        }
        List<IpAddress> external = new ArrayList<>(svc.externalIPs());
        external.addAll(svc.loadBalancerVIPs());
        for (IpAddress ip : external) {
            String key = ip + " . " + proto + " . " + port;
            if (hasEndpoints) {
                ops.add(new AddElement(SERVICE_IPS, key, null, "goto " + externalChain));
            }
            if (!hasExternalEndpoints) {
                ops.add(new AddElement(NO_ENDPOINT_SERVICES, key, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
            }
        }
        if (usesFirewallChain) {
            for (IpAddress vip : svc.loadBalancerVIPs()) {
                ops.add(new AddElement(FIREWALL_IPS, vip + " . " + proto + " . " + port, null, "goto " + firewallChain));
            }
        }
        if (svc.nodePort() != 0) {
            String key = proto + " . " + svc.nodePort();
            if (hasEndpoints) {
                ops.add(new AddElement(SERVICE_NODEPORTS, key, null, "goto " + externalChain));
            }
            if (!hasExternalEndpoints) {
                ops.add(new AddElement(NO_ENDPOINT_NODEPORTS, key, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
            }
        }

        // The internal chain masquerades traffic from outside the cluster (or all of it with --masquerade-all).
        if (hasInternalEndpoints) {
            String match = s.daddr() + " " + svc.clusterIP() + " " + proto + " dport " + port;
            Optional<Cidr> detector = settings.localDetector();
            if (settings.masqueradeAll()) {
                ops.add(new AddRule(internalChain, match + " jump " + MARK_FOR_MASQUERADE));
            } else if (detector.isPresent()) {
                ops.add(new AddRule(internalChain, match + " " + s.saddr() + " != " + detector.get() + " jump " + MARK_FOR_MASQUERADE));
            }
        }
        if (usesExternalChain) {
            if (!svc.externalPolicyLocal()) {
                ops.add(new AddRule(externalChain, "jump " + MARK_FOR_MASQUERADE));
                ops.add(new AddRule(externalChain, "goto " + clusterChain));
            } else {
                settings.localDetector().ifPresent(cidr -> ops.add(new AddRule(externalChain,
                        s.saddr() + " " + cidr + " goto " + clusterChain + " comment \"short-circuit pod traffic\"")));
                ops.add(new AddRule(externalChain, "fib saddr type local jump " + MARK_FOR_MASQUERADE + " comment \"masquerade local traffic\""));
                ops.add(new AddRule(externalChain, "fib saddr type local goto " + clusterChain + " comment \"short-circuit local traffic\""));
                if (hasExternalEndpoints) {
                    ops.add(new AddRule(externalChain, "goto " + localChain));
                }
            }
        }
        if (usesFirewallChain) {
            List<String> allowed = new ArrayList<>(svc.loadBalancerSourceRanges().stream().map(Cidr::toString).toList());
            // The node's own traffic to a VIP can come back with the VIP as its source: let it through.
            if (node.primaryIP().isPresent() && svc.loadBalancerSourceRanges().stream().anyMatch(c -> c.contains(node.primaryIP().get()))) {
                svc.loadBalancerVIPs().forEach(v -> allowed.add(v.toString()));
            }
            ops.add(new AddRule(firewallChain, s.saddr() + " != { " + String.join(" , ", allowed) + " } drop"));
        }

        // Affinity sets, the policy chains' choice of an endpoint, and the endpoint chains.
        if (svc.sessionAffinity()) {
            for (EndpointInfo ep : eps.allReachable()) {
                ops.add(new AddSet("affinity-" + NftNames.endpoint(svc.name(), ep), s.addrType(), List.of("dynamic", "timeout"),
                        svc.affinityTimeoutSeconds(), null));
            }
        }
        if (usesClusterChain) {
            policyChain(ops, s, svc, clusterChain, eps.cluster());
        }
        if (usesLocalChain) {
            policyChain(ops, s, svc, localChain, eps.local());
        }
        for (EndpointInfo ep : eps.allReachable()) {
            String endpoint = NftNames.endpoint(svc.name(), ep);
            String chain = "endpoint-" + endpoint;
            ops.add(new AddRule(chain, s.saddr() + " " + ep.ip() + " jump " + MARK_FOR_MASQUERADE));
            if (svc.sessionAffinity()) {
                ops.add(new AddRule(chain, "update @affinity-" + endpoint + " { " + s.saddr() + " }"));
            }
            ops.add(new AddRule(chain, "meta l4proto " + proto + " dnat to " + ep.ip().withPort(ep.port())));
        }
    }

    /** Affinity first (a client seen before goes back to its endpoint), then an endpoint chosen at random. */
    private static void policyChain(List<NftOp> ops, Syntax s, ServicePortInfo svc, String chain, List<EndpointInfo> endpoints) {
        if (svc.sessionAffinity()) {
            for (EndpointInfo ep : endpoints) {
                String endpoint = NftNames.endpoint(svc.name(), ep);
                ops.add(new AddRule(chain, s.saddr() + " @affinity-" + endpoint + " goto endpoint-" + endpoint));
            }
        }
        List<String> choices = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) {
            choices.add(i + " : goto endpoint-" + NftNames.endpoint(svc.name(), endpoints.get(i)));
        }
        ops.add(new AddRule(chain, "numgen random mod " + endpoints.size() + " vmap { " + String.join(" , ", choices) + " }"));
    }

    private static void chain(List<NftOp> ops, AddChain chain) {
        ops.add(chain);
        ops.add(new FlushChain(chain.name()));
    }

    /** What differs between the {@code ip} and {@code ip6} tables' rules. */
    private record Syntax(IpFamily family) {
        String daddr() {
            return family == IpFamily.IPV4 ? "ip daddr" : "ip6 daddr";
        }

        String saddr() {
            return family == IpFamily.IPV4 ? "ip saddr" : "ip6 saddr";
        }

        String addrType() {
            return family == IpFamily.IPV4 ? "ipv4_addr" : "ipv6_addr";
        }

        String loopback() {
            return family == IpFamily.IPV4 ? "127.0.0.0/8" : "::1";
        }
    }

    /** All families' tables: {@code ip} and/or {@code ip6}, as one text. */
    public static String renderAll(List<NftTransaction> tables) {
        return tables.stream().map(NftTransaction::render).collect(Collectors.joining());
    }
}
