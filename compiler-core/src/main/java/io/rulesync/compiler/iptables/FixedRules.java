package io.rulesync.compiler.iptables;

import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.Hex;
import io.rulesync.model.iptables.Part;
import io.rulesync.model.iptables.Part.CtState;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.Target;
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
    private FixedRules() {}

    public static boolean nodeDependent(ProxySettings settings) {
        return !settings.nodePortCidrs().isEmpty();
    }

    public static RuleFragment compile(ProxySettings settings, NodeContext node) {
        Hex mark = Hex.parse(settings.masqueradeMark());
        List<Chain> filter = new ArrayList<>(2);
        List<Rule> forward = new ArrayList<>(3);
        if (!settings.conntrackTcpBeLiberal()) {
            // Without tcp_be_liberal, out-of-window packets are INVALID and would reset connections.
            forward.add(Rule.with()
                    .add(new Part.Conntrack(false, List.of(CtState.INVALID)))
                    .then(Target.Verdict.DROP));
        }
        forward.add(Rule.with()
                .comment("kubernetes forwarding rules")
                .add(new Part.Mark(false, mark, mark))
                .then(Target.Verdict.ACCEPT));
        forward.add(Rule.with()
                .comment("kubernetes forwarding conntrack rule")
                .add(new Part.Conntrack(false, List.of(CtState.RELATED, CtState.ESTABLISHED)))
                .then(Target.Verdict.ACCEPT));
        filter.add(chain(TopChains.FORWARD, forward));
        if (settings.effectiveLocalhostNodePorts()) {
            // Localhost NodePorts need route_localnet, which lets martian packets in; this is
            // kube-proxy's (and kubelet's) mitigation for that hole.
            Cidr loopback = Cidr.parse("127.0.0.0/8");
            filter.add(chain(
                    TopChains.FIREWALL,
                    List.of(Rule.with()
                            .comment("block incoming localnet connections")
                            .destination(false, loopback)
                            .source(true, loopback)
                            .add(new Part.Conntrack(true, List.of(CtState.RELATED, CtState.ESTABLISHED, CtState.DNAT)))
                            .then(Target.Verdict.DROP))));
        }
        List<Chain> nat = List.of(
                chain(
                        TopChains.POSTROUTING,
                        List.of(
                                Rule.with().add(new Part.Mark(true, mark, mark)).then(Target.Verdict.RETURN),
                                // Clear the mark so that a packet re-entering the stack is not masqueraded twice.
                                Rule.with().then(new Target.SetMark(true, mark)),
                                Rule.with()
                                        .comment("kubernetes service traffic requiring SNAT")
                                        .then(new Target.Masquerade(settings.randomFully())))),
                chain(TopChains.MARK_MASQ, List.of(Rule.with().then(new Target.SetMark(false, mark)))));
        return new RuleFragment(
                Map.of(DispatchChain.NAT_SERVICES, restoreForms(nodePortJumps(settings, node))), filter, nat);
    }

    private static Chain chain(String name, List<Rule> rules) {
        return new Chain(name, restoreForms(rules));
    }

    private static List<String> restoreForms(List<Rule> rules) {
        return rules.stream().map(Rule::restoreForm).toList();
    }

    /** The last rules of nat KUBE-SERVICES: hand traffic for the node's own addresses to KUBE-NODEPORTS. */
    private static List<Rule> nodePortJumps(ProxySettings settings, NodeContext node) {
        String comment = "kubernetes service nodeports; NOTE: this must be the last rule in this chain";
        List<Cidr> cidrs = settings.nodePortCidrs();
        boolean ipv6 = settings.family() == IpFamily.IPV6;
        boolean localhost = settings.effectiveLocalhostNodePorts();
        if (cidrs.isEmpty()) {
            Rule.Builder rule = Rule.with().comment(comment).local(false);
            // Localhost NodePorts never work on IPv6, and on IPv4 only with route_localnet.
            if (ipv6) {
                rule.destination(true, Cidr.parse("::1/128"));
            } else if (!localhost) {
                rule.destination(true, Cidr.parse("127.0.0.0/8"));
            }
            return List.of(rule.jump(TopChains.NODEPORTS));
        }
        // The node's addresses stand in for its interfaces' addresses, which a central compiler
        // cannot see; the loopback address is on every node.
        TreeSet<IpAddress> candidates = new TreeSet<>(node.addresses());
        candidates.add(IpAddress.parse(ipv6 ? "::1" : "127.0.0.1"));
        List<Rule> out = new ArrayList<>();
        for (IpAddress ip : candidates) {
            if (cidrs.stream().noneMatch(c -> c.contains(ip))) {
                continue;
            }
            if (ip.isLoopback() && (ipv6 || !localhost)) {
                continue;
            }
            out.add(Rule.with().comment(comment).destination(ip).jump(TopChains.NODEPORTS));
        }
        return out;
    }
}
