package io.rulesync.api.history;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What changed in one node's IPVS configuration of one family between two versions: virtual
 * servers added, removed and changed (settings, real servers), set members, addresses on
 * {@code kube-ipvs0}, and IPVS mode's iptables rules. Pure; the answer to "what did this version do
 * to an IPVS node". Per node, not per node class: a node's own addresses are part of its
 * configuration (its NodePort virtual servers), so no two nodes share one.
 */
public record IpvsVersionDiff(
        IpFamily family,
        List<String> virtualServersAdded,
        List<String> virtualServersRemoved,
        List<ChangedServer> virtualServersChanged,
        List<SetChange> sets,
        List<String> addressesBound,
        List<String> addressesUnbound,
        List<String> rulesAdded,
        List<String> rulesRemoved) {

    public IpvsVersionDiff {
        Objects.requireNonNull(family, "family");
    }

    /** A virtual server in both versions: its settings ({@code rr}, {@code sh persistent 10800}) if they changed, and its real servers. */
    public record ChangedServer(
            String virtualServer,
            String settingsBefore,
            String settingsAfter,
            List<String> realServersAdded,
            List<String> realServersRemoved) {}

    /** One set's members added and removed. */
    public record SetChange(String set, List<String> added, List<String> removed) {}

    public boolean isEmpty() {
        return virtualServersAdded.isEmpty()
                && virtualServersRemoved.isEmpty()
                && virtualServersChanged.isEmpty()
                && sets.isEmpty()
                && addressesBound.isEmpty()
                && addressesUnbound.isEmpty()
                && rulesAdded.isEmpty()
                && rulesRemoved.isEmpty();
    }

    /** {@code before} or {@code after} null: the node had (or has) no configuration of this family. */
    public static IpvsVersionDiff between(IpFamily family, IpvsRules before, IpvsRules after) {
        Map<String, VirtualServer> was = servers(before);
        Map<String, VirtualServer> now = servers(after);
        List<String> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        List<ChangedServer> changed = new ArrayList<>();
        for (Map.Entry<String, VirtualServer> e : now.entrySet()) {
            VirtualServer old = was.get(e.getKey());
            if (old == null) {
                added.add(e.getKey() + " " + settings(e.getValue()) + reals(e.getValue()));
            } else if (!old.equals(e.getValue())) {
                String sb = settings(old);
                String sa = settings(e.getValue());
                changed.add(new ChangedServer(
                        e.getKey(),
                        sb.equals(sa) ? null : sb,
                        sb.equals(sa) ? null : sa,
                        minus(e.getValue().realServers(), old.realServers()),
                        minus(old.realServers(), e.getValue().realServers())));
            }
        }
        was.keySet().stream().filter(k -> !now.containsKey(k)).forEach(removed::add);

        List<SetChange> sets = new ArrayList<>();
        for (IpvsSet s : IpvsSet.values()) {
            SortedSet<String> a = members(before, s);
            SortedSet<String> b = members(after, s);
            List<String> plus = b.stream().filter(m -> !a.contains(m)).toList();
            List<String> minus = a.stream().filter(m -> !b.contains(m)).toList();
            if (!plus.isEmpty() || !minus.isEmpty()) {
                sets.add(new SetChange(s.name(family), plus, minus));
            }
        }
        SortedSet<IpAddress> boundBefore = before == null ? new TreeSet<>() : before.bound();
        SortedSet<IpAddress> boundAfter = after == null ? new TreeSet<>() : after.bound();
        List<String> rulesBefore = rules(before);
        List<String> rulesAfter = rules(after);
        return new IpvsVersionDiff(
                family,
                added,
                removed,
                changed,
                sets,
                boundAfter.stream()
                        .filter(a -> !boundBefore.contains(a))
                        .map(IpAddress::toString)
                        .toList(),
                boundBefore.stream()
                        .filter(a -> !boundAfter.contains(a))
                        .map(IpAddress::toString)
                        .toList(),
                rulesAfter.stream().filter(r -> !rulesBefore.contains(r)).toList(),
                rulesBefore.stream().filter(r -> !rulesAfter.contains(r)).toList());
    }

    private static Map<String, VirtualServer> servers(IpvsRules r) {
        Map<String, VirtualServer> out = new TreeMap<>();
        if (r != null) {
            r.virtualServers().forEach(vs -> out.put(vs.key(), vs));
        }
        return out;
    }

    private static SortedSet<String> members(IpvsRules r, IpvsSet s) {
        return r == null ? new TreeSet<>() : r.sets().get(s);
    }

    private static List<String> rules(IpvsRules r) {
        if (r == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(r.natRules().size() + r.filterRules().size());
        r.natRules().forEach(l -> out.add("nat " + l));
        r.filterRules().forEach(l -> out.add("filter " + l));
        return out;
    }

    private static String settings(VirtualServer vs) {
        return vs.scheduler() + (vs.persistenceSeconds() > 0 ? " persistent " + vs.persistenceSeconds() : "");
    }

    private static String reals(VirtualServer vs) {
        return vs.realServers().isEmpty()
                ? ""
                : " -> "
                        + String.join(
                                " ",
                                vs.realServers().stream().map(RealServer::text).toList());
    }

    private static List<String> minus(List<RealServer> a, List<RealServer> b) {
        return a.stream().filter(r -> !b.contains(r)).map(RealServer::text).toList();
    }
}
