package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One node's IPVS configuration from the parts of its fragments: the fixed unit's part and the
 * parts of the service ports, as {@link io.rulesync.model.rules.ClusterRules#ruleSet} chooses them
 * for the node. It fills in what each part leaves to the node (see {@link IpvsPart}), then writes a
 * fixed rule only where the set it requires has members, as kube-proxy does. Compiler, api and agent
 * all assemble with this one function.
 */
public final class IpvsAssembly {
    private IpvsAssembly() {}

    public static IpvsRules assemble(String node, IpFamily family, IpvsPart fixed, List<IpvsPart> ports) {
        List<IpAddress> addresses = List.of();
        List<IpAddress> nodePortAddresses = List.of();
        for (IpvsPart.NodeAddresses n : fixed.nodes()) {
            if (n.node().equals(node)) {
                addresses = n.addresses();
                nodePortAddresses = n.nodePortAddresses();
            }
        }
        Set<IpAddress> own = new HashSet<>(addresses);
        boolean servesNodePorts = !nodePortAddresses.isEmpty();

        Map<IpvsSet, SortedSet<String>> sets = new EnumMap<>(IpvsSet.class);
        for (IpvsSet s : IpvsSet.values()) {
            sets.put(s, new TreeSet<>());
        }
        List<VirtualServer> virtualServers = new ArrayList<>();
        SortedSet<IpAddress> bound = new TreeSet<>();
        List<String> portFilterRules = new ArrayList<>();
        for (IpvsPart p : ports) {
            for (IpvsPart.ServiceTemplate t : p.services()) {
                if (t.address() != null) {
                    virtualServers.add(t.at(t.address()));
                } else {
                    nodePortAddresses.forEach(a -> virtualServers.add(t.at(a)));
                }
            }
            for (IpvsPart.SetEntry e : p.sets()) {
                if (!e.nodePortOnly()) {
                    sets.get(e.set()).add(e.member());
                } else if (e.member().startsWith(IpvsPart.NODE)) {
                    String rest = e.member().substring(IpvsPart.NODE.length());
                    nodePortAddresses.forEach(a -> sets.get(e.set()).add(a + rest));
                } else if (servesNodePorts) {
                    sets.get(e.set()).add(e.member());
                }
            }
            for (IpvsPart.LoopBack l : p.loopBacks()) {
                if (l.node().equals(node)) {
                    sets.get(IpvsSet.LOOP_BACK).add(l.member());
                }
            }
            for (IpAddress b : p.binds()) {
                if (!own.contains(b)) {
                    bound.add(b);
                }
            }
            p.rules().forEach(r -> portFilterRules.add(r.text()));
        }
        bound.forEach(ip -> sets.get(IpvsSet.IPVS_IPS).add(ip.toString()));
        // Two Services that claim one address:port (an external IP twice, say) give one virtual
        // server, the first in unit order, where kube-proxy's would flap between them.
        Map<String, VirtualServer> unique = new LinkedHashMap<>();
        virtualServers.forEach(vs -> unique.putIfAbsent(vs.key(), vs));
        portFilterRules.sort(null);

        List<String> nat = new ArrayList<>();
        List<String> filter = new ArrayList<>();
        for (IpvsPart.Rule r : fixed.rules()) {
            List<String> table = r.table().equals("nat") ? nat : filter;
            if (r.text().equals(IpvsPart.PORT_RULES)) {
                table.addAll(portFilterRules);
            } else if (r.requires() == null || !sets.get(r.requires()).isEmpty()) {
                table.add(r.text());
            }
        }
        return new IpvsRules(family, bound, List.copyOf(unique.values()), sets, nat, filter);
    }
}
