package io.rulesync.model.nftables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftOp.AddChain;
import io.rulesync.model.nftables.NftOp.AddElement;
import io.rulesync.model.nftables.NftOp.AddMap;
import io.rulesync.model.nftables.NftOp.AddRule;
import io.rulesync.model.nftables.NftOp.AddSet;
import io.rulesync.model.nftables.NftOp.AddTable;
import io.rulesync.model.nftables.NftOp.BaseChain;
import io.rulesync.model.nftables.NftOp.FlushChain;
import io.rulesync.model.nftables.NftOp.FlushSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One node's {@code kube-proxy} table of one family, from the nftables parts of the fragments the node uses: the fixed
 * unit's part, then the service ports' in unit order. This is kube-proxy's full sync (conformant with v1.33.6: the
 * base-chain layout shared with v1.34+, and v1.33's internal masquerade rule that names the port), written once here
 * for the compiler, the api and the agent.
 *
 * <p>Where kube-proxy's full syncs differ from process to process, this writes the steady state: no {@code add}+
 * {@code delete} of the base chains (a first sync after a start only), no {@code drop} of unallocated ClusterIPs
 * (written only when the ServiceCIDRs are known, which a cluster's settings do not carry), and Services in name order
 * where kube-proxy's is a Go map's. An element two ports claim (an external IP twice, say) is written once, the first
 * in unit order's, where kube-proxy's would depend on that map's order.
 */
public final class NftAssembly {
    public static final String CLUSTER_IPS = "cluster-ips";
    public static final String NODEPORT_IPS = "nodeport-ips";
    public static final String SERVICE_IPS = "service-ips";
    public static final String SERVICE_NODEPORTS = "service-nodeports";
    public static final String NO_ENDPOINT_SERVICES = "no-endpoint-services";
    public static final String NO_ENDPOINT_NODEPORTS = "no-endpoint-nodeports";
    public static final String FIREWALL_IPS = "firewall-ips";
    static final String MARK_FOR_MASQUERADE = "mark-for-masquerade";
    static final String REJECT_CHAIN = "reject-chain";

    private NftAssembly() {}

    public static NftTransaction table(String node, IpFamily family, NftPart.Fixed fixed, List<NftPart.Port> ports) {
        Syntax s = new Syntax(family);
        Ops ops = new Ops();
        prologue(ops, s, fixed, fixed.nodePortAddresses(node));
        for (NftPart.Port p : ports) {
            if (p.clusterIP().family() != family) {
                throw new IllegalArgumentException(p.unit().id() + ": not a part of the " + family + " table");
            }
            servicePort(ops, s, p);
        }
        return new NftTransaction(family, ops.list);
    }

    /** The operations in order; an element already added is not added again. */
    private static final class Ops {
        final List<NftOp> list = new ArrayList<>();
        final Set<String> elements = new HashSet<>();

        void add(NftOp op) {
            if (!(op instanceof AddElement e) || elements.add(e.set() + " " + e.key())) {
                list.add(op);
            }
        }

        void chain(AddChain chain) {
            list.add(chain);
            list.add(new FlushChain(chain.name()));
        }
    }

    /** The table's fixed part: base chains and their jumps, the dispatch maps, the checks and masquerading. */
    private static void prologue(Ops ops, Syntax s, NftPart.Fixed fixed, List<IpAddress> nodePortIps) {
        String mark = fixed.markText();
        boolean everywhere = fixed.nodePortsEverywhere();
        ops.add(new AddTable());
        ops.chain(new AddChain("filter-prerouting-pre-dnat", new BaseChain("filter", "prerouting", -110), null));
        ops.chain(new AddChain("filter-output-pre-dnat", new BaseChain("filter", "output", -110), null));
        ops.chain(new AddChain("filter-input", new BaseChain("filter", "input", 0), null));
        ops.chain(new AddChain("filter-forward", new BaseChain("filter", "forward", 0), null));
        ops.chain(new AddChain("filter-output", new BaseChain("filter", "output", 0), null));
        ops.chain(new AddChain("nat-prerouting", new BaseChain("nat", "prerouting", -100), null));
        ops.chain(new AddChain("nat-output", new BaseChain("nat", "output", -100), null));
        ops.chain(new AddChain("nat-postrouting", new BaseChain("nat", "postrouting", 100), null));
        ops.chain(new AddChain("nodeport-endpoints-check"));
        ops.add(new AddRule("filter-input", "ct state new jump nodeport-endpoints-check"));
        ops.chain(new AddChain("service-endpoints-check"));
        ops.add(new AddRule("filter-input", "ct state new jump service-endpoints-check"));
        ops.add(new AddRule("filter-forward", "ct state new jump service-endpoints-check"));
        ops.add(new AddRule("filter-output", "ct state new jump service-endpoints-check"));
        ops.chain(new AddChain("firewall-check"));
        ops.add(new AddRule("filter-prerouting-pre-dnat", "ct state new jump firewall-check"));
        ops.add(new AddRule("filter-output-pre-dnat", "ct state new jump firewall-check"));
        ops.chain(new AddChain("services"));
        ops.add(new AddRule("nat-output", "jump services"));
        ops.add(new AddRule("nat-prerouting", "jump services"));
        ops.chain(new AddChain("masquerading"));
        ops.add(new AddRule("nat-postrouting", "jump masquerading"));
        ops.chain(new AddChain("cluster-ips-check"));
        ops.add(new AddRule("filter-forward", "ct state new jump cluster-ips-check"));
        ops.add(new AddRule("filter-output", "ct state new jump cluster-ips-check"));
        ops.chain(new AddChain(MARK_FOR_MASQUERADE));
        ops.add(new AddRule(MARK_FOR_MASQUERADE, "mark set mark or " + mark));
        ops.add(new AddRule("masquerading", "mark and " + mark + " == 0 return"));
        ops.add(new AddRule("masquerading", "mark set mark xor " + mark));
        ops.add(new AddRule("masquerading", "masquerade fully-random"));
        ops.add(new AddSet(CLUSTER_IPS, s.addrType(), List.of(), 0, "Active ClusterIPs"));
        ops.add(new AddRule(
                "cluster-ips-check",
                s.daddr() + " @" + CLUSTER_IPS + " reject comment \"Reject traffic to invalid ports of ClusterIPs\""));
        if (!everywhere) {
            ops.add(new AddSet(NODEPORT_IPS, s.addrType(), List.of(), 0, "IPs that accept NodePort traffic"));
            ops.add(new FlushSet(NODEPORT_IPS));
            for (IpAddress ip : nodePortIps) {
                if (ip.family() == s.family()) {
                    ops.add(new AddElement(NODEPORT_IPS, ip.toString(), null, null));
                }
            }
        }
        ops.add(new AddMap(
                NO_ENDPOINT_SERVICES,
                s.addrType() + " . inet_proto . inet_service",
                "vmap to drop or reject packets to services with no endpoints"));
        ops.add(new AddMap(
                NO_ENDPOINT_NODEPORTS,
                "inet_proto . inet_service",
                "vmap to drop or reject packets to service nodeports with no endpoints"));
        ops.chain(new AddChain(REJECT_CHAIN, null, "helper for @no-endpoint-services / @no-endpoint-nodeports"));
        ops.add(new AddRule(REJECT_CHAIN, "reject"));
        ops.add(new AddRule(
                "service-endpoints-check", s.daddr() + " . meta l4proto . th dport vmap @" + NO_ENDPOINT_SERVICES));
        ops.add(new AddRule(
                "nodeport-endpoints-check",
                (everywhere ? s.daddr() + " != " + s.loopback() : s.daddr() + " @" + NODEPORT_IPS)
                        + " meta l4proto . th dport vmap @" + NO_ENDPOINT_NODEPORTS));
        ops.add(new AddMap(
                FIREWALL_IPS,
                s.addrType() + " . inet_proto . inet_service",
                "destinations that are subject to LoadBalancerSourceRanges"));
        ops.add(new AddRule("firewall-check", s.daddr() + " . meta l4proto . th dport vmap @" + FIREWALL_IPS));
        ops.add(new AddMap(
                SERVICE_IPS,
                s.addrType() + " . inet_proto . inet_service",
                "ClusterIP, ExternalIP and LoadBalancer IP traffic"));
        ops.add(new AddMap(SERVICE_NODEPORTS, "inet_proto . inet_service", "NodePort traffic"));
        ops.add(new AddRule("services", s.daddr() + " . meta l4proto . th dport vmap @" + SERVICE_IPS));
        ops.add(new AddRule(
                "services",
                everywhere
                        ? "fib daddr type local " + s.daddr() + " != " + s.loopback()
                                + " meta l4proto . th dport vmap @" + SERVICE_NODEPORTS
                        : s.daddr() + " @" + NODEPORT_IPS + " meta l4proto . th dport vmap @" + SERVICE_NODEPORTS));
    }

    /** One service port: its chains, its map and set elements, then its rules, in kube-proxy's order. */
    private static void servicePort(Ops ops, Syntax s, NftPart.Port p) {
        var svc = p.unit().name();
        String name = svc.toString();
        String proto = svc.protocol().lower();
        String hashed = NftNames.servicePort(svc);
        String clusterChain = "service-" + hashed;
        String localChain = "local-" + hashed;
        String externalChain = "external-" + hashed;
        String firewallChain = "firewall-" + hashed;
        boolean usesClusterChain = !p.clusterChain().isEmpty();
        boolean usesLocalChain = !p.localChain().isEmpty();
        boolean hasEndpoints = p.hasEndpoints();
        String internalChain = p.internalLocal() ? localChain : clusterChain;
        boolean hasInternalEndpoints = p.internalLocal() ? usesLocalChain : hasEndpoints;
        boolean hasExternalEndpoints = p.externalLocal() ? usesLocalChain : hasEndpoints;
        boolean usesExternalChain = hasEndpoints && p.externallyAccessible();
        boolean usesFirewallChain =
                !p.loadBalancerIPs().isEmpty() && !p.sourceRanges().isEmpty();

        for (NftPart.Endpoint ep : p.reachable()) {
            ops.chain(new AddChain("endpoint-" + NftNames.endpoint(svc, ep.ip(), ep.port())));
        }
        if (usesClusterChain) {
            ops.chain(new AddChain(clusterChain));
        }
        if (usesLocalChain) {
            ops.chain(new AddChain(localChain));
        }
        if (usesExternalChain) {
            ops.chain(new AddChain(externalChain));
        }

        // The ClusterIP.
        String port = Integer.toString(p.port());
        ops.add(new AddElement(CLUSTER_IPS, p.clusterIP().toString(), null, null));
        String clusterKey = p.clusterIP() + " . " + proto + " . " + port;
        if (hasInternalEndpoints) {
            ops.add(new AddElement(SERVICE_IPS, clusterKey, null, "goto " + internalChain));
        } else {
            ops.add(new AddElement(
                    NO_ENDPOINT_SERVICES, clusterKey, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
        }
        // External IPs, then load-balancer IPs (kube-proxy's order), and the NodePort.
        if (usesFirewallChain) {
            ops.chain(new AddChain(firewallChain));
        }
        List<IpAddress> external = new ArrayList<>(p.externalIPs());
        external.addAll(p.loadBalancerIPs());
        for (IpAddress ip : external) {
            String key = ip + " . " + proto + " . " + port;
            if (hasEndpoints) {
                ops.add(new AddElement(SERVICE_IPS, key, null, "goto " + externalChain));
            }
            if (!hasExternalEndpoints) {
                ops.add(new AddElement(
                        NO_ENDPOINT_SERVICES, key, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
            }
        }
        if (usesFirewallChain) {
            for (IpAddress vip : p.loadBalancerIPs()) {
                ops.add(new AddElement(
                        FIREWALL_IPS, vip + " . " + proto + " . " + port, null, "goto " + firewallChain));
            }
        }
        if (p.nodePort() != 0) {
            String key = proto + " . " + p.nodePort();
            if (hasEndpoints) {
                ops.add(new AddElement(SERVICE_NODEPORTS, key, null, "goto " + externalChain));
            }
            if (!hasExternalEndpoints) {
                ops.add(new AddElement(
                        NO_ENDPOINT_NODEPORTS, key, name, hasEndpoints ? "drop" : "goto " + REJECT_CHAIN));
            }
        }

        // The internal chain masquerades traffic from outside the cluster (or all of it with --masquerade-all).
        if (hasInternalEndpoints) {
            String match = s.daddr() + " " + p.clusterIP() + " " + proto + " dport " + port;
            if (p.masqueradeAll()) {
                ops.add(new AddRule(internalChain, match + " jump " + MARK_FOR_MASQUERADE));
            } else if (p.podCidr() != null) {
                ops.add(new AddRule(
                        internalChain,
                        match + " " + s.saddr() + " != " + p.podCidr() + " jump " + MARK_FOR_MASQUERADE));
            }
        }
        if (usesExternalChain) {
            if (!p.externalLocal()) {
                ops.add(new AddRule(externalChain, "jump " + MARK_FOR_MASQUERADE));
                ops.add(new AddRule(externalChain, "goto " + clusterChain));
            } else {
                if (p.podCidr() != null) {
                    ops.add(new AddRule(
                            externalChain,
                            s.saddr() + " " + p.podCidr() + " goto " + clusterChain
                                    + " comment \"short-circuit pod traffic\""));
                }
                ops.add(new AddRule(
                        externalChain,
                        "fib saddr type local jump " + MARK_FOR_MASQUERADE + " comment \"masquerade local traffic\""));
                ops.add(new AddRule(
                        externalChain,
                        "fib saddr type local goto " + clusterChain + " comment \"short-circuit local traffic\""));
                if (hasExternalEndpoints) {
                    ops.add(new AddRule(externalChain, "goto " + localChain));
                }
            }
        }
        if (usesFirewallChain) {
            List<String> allowed = new ArrayList<>(
                    p.sourceRanges().stream().map(Cidr::toString).toList());
            // The node's own traffic to a VIP can come back with the VIP as its source: let it through.
            if (p.allowVipSources()) {
                p.loadBalancerIPs().forEach(v -> allowed.add(v.toString()));
            }
            ops.add(new AddRule(firewallChain, s.saddr() + " != { " + String.join(" , ", allowed) + " } drop"));
        }

        // Affinity sets, the policy chains' choice of an endpoint, and the endpoint chains.
        if (p.affinitySeconds() > 0) {
            for (NftPart.Endpoint ep : p.reachable()) {
                ops.add(new AddSet(
                        "affinity-" + NftNames.endpoint(svc, ep.ip(), ep.port()),
                        s.addrType(),
                        List.of("dynamic", "timeout"),
                        p.affinitySeconds(),
                        null));
            }
        }
        if (usesClusterChain) {
            policyChain(ops, s, p, clusterChain, p.clusterChain());
        }
        if (usesLocalChain) {
            policyChain(ops, s, p, localChain, p.localChain());
        }
        for (NftPart.Endpoint ep : p.reachable()) {
            String endpoint = NftNames.endpoint(svc, ep.ip(), ep.port());
            String chain = "endpoint-" + endpoint;
            ops.add(new AddRule(chain, s.saddr() + " " + ep.ip() + " jump " + MARK_FOR_MASQUERADE));
            if (p.affinitySeconds() > 0) {
                ops.add(new AddRule(chain, "update @affinity-" + endpoint + " { " + s.saddr() + " }"));
            }
            ops.add(new AddRule(chain, "meta l4proto " + proto + " dnat to " + ep));
        }
    }

    /** Affinity first (a client seen before goes back to its endpoint), then an endpoint chosen at random. */
    private static void policyChain(Ops ops, Syntax s, NftPart.Port p, String chain, List<NftPart.Endpoint> endpoints) {
        var svc = p.unit().name();
        if (p.affinitySeconds() > 0) {
            for (NftPart.Endpoint ep : endpoints) {
                String endpoint = NftNames.endpoint(svc, ep.ip(), ep.port());
                ops.add(new AddRule(chain, s.saddr() + " @affinity-" + endpoint + " goto endpoint-" + endpoint));
            }
        }
        List<String> choices = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) {
            NftPart.Endpoint ep = endpoints.get(i);
            choices.add(i + " : goto endpoint-" + NftNames.endpoint(svc, ep.ip(), ep.port()));
        }
        ops.add(new AddRule(
                chain, "numgen random mod " + endpoints.size() + " vmap { " + String.join(" , ", choices) + " }"));
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
}
