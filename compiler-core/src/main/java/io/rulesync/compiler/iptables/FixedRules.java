package io.rulesync.compiler.iptables;

import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.TopChains;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The rules of a node that belong to no Service: masquerade marking and SNAT, forwarding, the
 * localhost martian guard, and the last KUBE-SERVICES rule that hands traffic for the node's own
 * addresses to KUBE-NODEPORTS. They depend on the settings, and on the node only through its
 * addresses when {@code --nodeport-addresses} is set ({@link #nodeDependent}).
 */
public final class FixedRules {
    private FixedRules() {
    }

    public static boolean nodeDependent(ProxySettings settings) {
        return !settings.nodePortCidrs().isEmpty();
    }

    public static RuleFragment compile(ProxySettings settings, NodeContext node) {
        String mark = settings.masqueradeMark();
        List<Chain> filter = new ArrayList<>(2);
        List<String> forward = new ArrayList<>(3);
        if (!settings.conntrackTcpBeLiberal()) {
            // Without tcp_be_liberal, out-of-window packets are INVALID and would reset connections.
            forward.add("-m conntrack --ctstate INVALID -j DROP");
        }
        forward.add("-m comment --comment \"kubernetes forwarding rules\" -m mark --mark " + mark + "/" + mark + " -j ACCEPT");
        forward.add("-m comment --comment \"kubernetes forwarding conntrack rule\" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT");
        filter.add(new Chain(TopChains.FORWARD, forward));
        if (settings.effectiveLocalhostNodePorts()) {
            // Localhost NodePorts need route_localnet, which lets martian packets in; this is
            // kube-proxy's (and kubelet's) mitigation for that hole.
            filter.add(new Chain(TopChains.FIREWALL, List.of("-m comment --comment \"block incoming localnet connections\""
                    + " -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP")));
        }
        List<Chain> nat = List.of(
                new Chain(TopChains.POSTROUTING, List.of(
                        "-m mark ! --mark " + mark + "/" + mark + " -j RETURN",
                        // Clear the mark so that a packet re-entering the stack is not masqueraded twice.
                        "-j MARK --xor-mark " + mark,
                        "-m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE"
                                + (settings.randomFully() ? " --random-fully" : ""))),
                new Chain(TopChains.MARK_MASQ, List.of("-j MARK --or-mark " + mark)));
        return new RuleFragment(Map.of(DispatchChain.NAT_SERVICES, nodePortJumps(settings, node)), filter, nat);
    }

    /** The last rules of nat KUBE-SERVICES: hand traffic for the node's own addresses to KUBE-NODEPORTS. */
    private static List<String> nodePortJumps(ProxySettings settings, NodeContext node) {
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
            return List.of(comment + destinations + " -j " + TopChains.NODEPORTS);
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
            out.add(comment + "-d " + ip + " -j " + TopChains.NODEPORTS);
        }
        return out;
    }
}
