package io.rulesync.agent.conntrack;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.iptables.Part;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.iptables.Target;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which UDP conntrack entries a change makes stale, as kube-proxy's {@code CleanStaleEntries}
 * decides: UDP has no connection to reset, so an entry that still points at a removed endpoint (or
 * at the REJECT of a Service that had none) would blackhole a client that keeps its source port
 * until the entry times out.
 * <ul>
 *   <li>an endpoint removed: entries from each Service IP and NodePort DNATed to it;</li>
 *   <li>a Service's first endpoint: every entry to its IPs and NodePorts;</li>
 *   <li>a Service removed: every entry to its IPs.</li>
 * </ul>
 * Read from the fragments themselves (their destinations, NodePorts and DNAT targets), so it needs
 * nothing but what the agent applies.
 */
public final class StaleFlows {
    private StaleFlows() {}

    /** One {@code conntrack -D} call. */
    public record Flush(IpAddress serviceIp, int nodePort, IpAddress endpoint) {
        /** The conntrack arguments after {@code -D}. */
        public List<String> arguments(IpFamily family) {
            List<String> a = new ArrayList<>(List.of("-f", family == IpFamily.IPV6 ? "ipv6" : "ipv4", "-p", "udp"));
            if (serviceIp != null) {
                a.addAll(List.of("--orig-dst", serviceIp.toString()));
            } else {
                a.addAll(List.of("--dport", Integer.toString(nodePort)));
            }
            if (endpoint != null) {
                a.addAll(List.of("--dst-nat", endpoint.toString()));
            }
            return a;
        }
    }

    public static List<Flush> between(IpFamily family, Unit unit, RuleFragment before, RuleFragment after) {
        if (!(unit instanceof Unit.Port p) || p.name().protocol() != Protocol.UDP) {
            return List.of();
        }
        Shape b = Shape.of(family, before);
        Shape a = Shape.of(family, after);
        List<Flush> out = new ArrayList<>();
        if (after.equals(RuleFragment.EMPTY)) {
            b.ips.forEach(ip -> out.add(new Flush(ip, 0, null)));
            return out;
        }
        if (b.endpoints.isEmpty() && !a.endpoints.isEmpty()) {
            a.ips.forEach(ip -> out.add(new Flush(ip, 0, null)));
            a.nodePorts.forEach(port -> out.add(new Flush(null, port, null)));
            return out;
        }
        for (IpAddress gone : b.endpoints) {
            if (!a.endpoints.contains(gone)) {
                a.ips.forEach(ip -> out.add(new Flush(ip, 0, gone)));
                a.nodePorts.forEach(port -> out.add(new Flush(null, port, gone)));
            }
        }
        return out;
    }

    /** A fragment's Service IPs, NodePorts and endpoints. */
    private record Shape(Set<IpAddress> ips, Set<Integer> nodePorts, Set<IpAddress> endpoints) {
        static Shape of(IpFamily family, RuleFragment f) {
            Set<IpAddress> ips = new TreeSet<>();
            Set<Integer> ports = new TreeSet<>();
            Set<IpAddress> endpoints = new TreeSet<>();
            for (DispatchChain d : DispatchChain.values()) {
                for (String rule : f.appended(d)) {
                    Rule r = RuleGrammar.parse(d.table(), family, d.chain(), rule);
                    boolean nodePort = d == DispatchChain.NAT_NODEPORTS
                            || d == DispatchChain.FILTER_NODEPORTS
                            || r.first(Part.AddrType.class)
                                    .filter(t -> !t.source())
                                    .isPresent();
                    if (nodePort) {
                        r.destinationPort().ifPresent(ports::add);
                    } else {
                        r.destination()
                                .filter(dst -> !dst.negated() && dst.cidr().isHost())
                                .ifPresent(dst -> ips.add(dst.cidr().network()));
                    }
                }
            }
            for (Chain c : f.chains(Table.NAT)) {
                for (String rule : c.rules()) {
                    Rule r = RuleGrammar.parse(Table.NAT, family, c.name(), rule);
                    r.target()
                            .filter(t -> t instanceof Target.Dnat)
                            .ifPresent(t -> endpoints.add(((Target.Dnat) t).address()));
                }
            }
            return new Shape(ips, ports, endpoints);
        }
    }
}
