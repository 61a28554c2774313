package io.rulesync.compiler.nftables;

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
import io.rulesync.model.cluster.Service;
import io.rulesync.model.nftables.NftAssembly;
import io.rulesync.model.nftables.NftPart;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * kube-proxy's nftables mode: what each unit contributes to a node's {@code kube-proxy} table ({@link NftPart}), decided
 * here from the cluster's objects and the node class, and rendered by {@link NftAssembly}. {@link #compile} is one
 * node's whole table, the assembly of its parts; the cluster compiler stores the same parts in every fragment.
 */
public final class NftablesCompiler {
    private NftablesCompiler() {}

    public static NftTransaction compile(ClusterState state, String nodeName, ProxySettings settings)
            throws UnknownNodeException {
        Node node = state.node(nodeName).orElseThrow(() -> new UnknownNodeException(nodeName));
        IpFamily family = settings.family();
        NodeContext ctx = NodeContext.of(node, family);
        List<NftPart.Port> ports = new ArrayList<>();
        for (Service svc : state.services()) {
            for (PortInput in : PortInput.of(svc, state, family)) {
                ports.add(portPart(in, ctx, settings));
            }
        }
        return NftAssembly.table(nodeName, family, fixedPart(settings, List.of(ctx)), ports);
    }

    /** The fixed unit's part for these nodes: the mark, and each node's NodePort addresses unless NodePorts are served everywhere. */
    public static NftPart.Fixed fixedPart(ProxySettings settings, Collection<NodeContext> nodes) {
        IpFamily family = settings.family();
        boolean everywhere =
                settings.nodePortAddresses().stream().anyMatch(c -> c.family() == family && c.prefix() == 0);
        List<NftPart.NodePorts> listed = new ArrayList<>();
        if (!everywhere) {
            for (NodeContext n : nodes) {
                listed.add(new NftPart.NodePorts(n.name(), nodePortIps(n, settings, family)));
            }
        }
        return new NftPart.Fixed(Long.decode(settings.masqueradeMark()), everywhere, listed);
    }

    /**
     * The node addresses that take NodePort traffic: those in {@code --nodeport-addresses}, or the node's primary address
     * when none is given (nftables mode's default, unlike iptables mode's every local address); never loopback.
     */
    static List<IpAddress> nodePortIps(NodeContext node, ProxySettings settings, IpFamily family) {
        List<Cidr> cidrs = settings.nodePortAddresses().stream()
                .filter(c -> c.family() == family)
                .toList();
        if (cidrs.isEmpty()) {
            return node.primaryIP().filter(ip -> !ip.isLoopback()).map(List::of).orElse(List.of());
        }
        return node.addresses().stream()
                .filter(ip -> !ip.isLoopback() && cidrs.stream().anyMatch(c -> c.contains(ip)))
                .toList();
    }

    /** One service port on one node class: kube-proxy's choices of endpoints and chains for it. */
    public static NftPart.Port portPart(PortInput in, NodeContext node, ProxySettings settings) {
        ServicePortInfo svc = in.info();
        EndpointCategories eps =
                EndpointCategories.categorize(in.endpoints().forNode(node.name()), svc, node.name(), node.zone());
        List<NftPart.Endpoint> cluster =
                !eps.cluster().isEmpty() && svc.usesClusterEndpoints() ? endpoints(eps.cluster()) : List.of();
        List<NftPart.Endpoint> local =
                !eps.local().isEmpty() && svc.usesLocalEndpoints() ? endpoints(eps.local()) : List.of();
        // The node's own traffic to a VIP can come back with the VIP as its source: let it through.
        boolean allowVips = node.primaryIP().isPresent()
                && svc.loadBalancerSourceRanges().stream()
                        .anyMatch(c -> c.contains(node.primaryIP().get()));
        return new NftPart.Port(
                (Unit.Port) Unit.of(svc.name()),
                svc.clusterIP(),
                svc.port(),
                svc.nodePort(),
                svc.externalIPs(),
                svc.loadBalancerVIPs(),
                svc.loadBalancerSourceRanges(),
                allowVips,
                svc.internalPolicyLocal(),
                svc.externalPolicyLocal(),
                svc.affinityTimeoutSeconds(),
                settings.masqueradeAll(),
                settings.localDetector().orElse(null),
                eps.hasAny(),
                cluster,
                local,
                endpoints(eps.allReachable()));
    }

    private static List<NftPart.Endpoint> endpoints(List<EndpointInfo> eps) {
        return eps.stream().map(e -> new NftPart.Endpoint(e.ip(), e.port())).toList();
    }

    /** All families' tables: {@code ip} and/or {@code ip6}, as one text. */
    public static String renderAll(List<NftTransaction> tables) {
        return tables.stream().map(NftTransaction::render).collect(Collectors.joining());
    }
}
