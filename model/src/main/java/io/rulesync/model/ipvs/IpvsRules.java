package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What kube-proxy's IPVS mode programs on one node for one IP family: the addresses bound to the
 * {@code kube-ipvs0} dummy device, the virtual servers with their real servers, the ipsets with
 * their members, and the iptables rules IPVS mode still needs (restore text, plus the jumps from the
 * built-in chains that kube-proxy inserts one by one). Rendered as {@code ipvsadm-restore},
 * {@code ipset restore} and {@code iptables-restore} input; every rendering is sorted, so equal
 * states give byte-identical text.
 */
public record IpvsRules(
        IpFamily family,
        SortedSet<IpAddress> bound,
        List<VirtualServer> virtualServers,
        Map<IpvsSet, SortedSet<String>> sets,
        List<String> natRules,
        List<String> filterRules) {

    /** Declared in the nat table, in kube-proxy's order. */
    public static final List<String> NAT_CHAINS =
            List.of("KUBE-SERVICES", "KUBE-POSTROUTING", "KUBE-NODE-PORT", "KUBE-LOAD-BALANCER", "KUBE-MARK-MASQ");
    /** Declared in the filter table, in kube-proxy's order. */
    public static final List<String> FILTER_CHAINS = List.of(
            "KUBE-FORWARD",
            "KUBE-NODE-PORT",
            "KUBE-PROXY-FIREWALL",
            "KUBE-SOURCE-RANGES-FIREWALL",
            "KUBE-IPVS-FILTER",
            "KUBE-IPVS-OUT-FILTER");

    /** A rule kube-proxy inserts at the top of a built-in chain ({@code iptables -I CHAIN 1 RULE}) unless present. */
    public record Jump(String table, String chain, String rule) {}

    /** In insertion order: on a fresh host INPUT ends up IPVS-FILTER, PROXY-FIREWALL, NODE-PORT. */
    public static final List<Jump> JUMPS = List.of(
            new Jump("nat", "OUTPUT", "-m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES"),
            new Jump("nat", "PREROUTING", "-m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES"),
            new Jump("nat", "POSTROUTING", "-m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING"),
            new Jump("filter", "FORWARD", "-m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD"),
            new Jump("filter", "INPUT", "-m comment --comment \"kubernetes health check rules\" -j KUBE-NODE-PORT"),
            new Jump("filter", "INPUT", "-m comment --comment \"kube-proxy firewall rules\" -j KUBE-PROXY-FIREWALL"),
            new Jump("filter", "FORWARD", "-m comment --comment \"kube-proxy firewall rules\" -j KUBE-PROXY-FIREWALL"),
            new Jump("filter", "INPUT", "-m comment --comment \"kubernetes ipvs access filter\" -j KUBE-IPVS-FILTER"),
            new Jump(
                    "filter",
                    "OUTPUT",
                    "-m comment --comment \"kubernetes ipvs access filter\" -j KUBE-IPVS-OUT-FILTER"));

    public IpvsRules {
        bound = new TreeSet<>(bound);
        virtualServers = virtualServers.stream().sorted().toList();
        Map<IpvsSet, SortedSet<String>> copy = new EnumMap<>(IpvsSet.class);
        for (IpvsSet s : IpvsSet.values()) {
            SortedSet<String> members = new TreeSet<>(entryOrder(s));
            members.addAll(sets.getOrDefault(s, new TreeSet<>()));
            copy.put(s, members);
        }
        sets = copy;
        natRules = List.copyOf(natRules);
        filterRules = List.copyOf(filterRules);
    }

    /** Ports of bitmap sets in numeric order; other entries as text. */
    private static Comparator<String> entryOrder(IpvsSet s) {
        return s.bitmap() ? Comparator.comparingInt(Integer::parseInt) : Comparator.naturalOrder();
    }

    /** {@code ipvsadm-restore} input: each virtual server, then its real servers. */
    public String ipvsadmRestore() {
        StringBuilder out = new StringBuilder();
        for (VirtualServer vs : virtualServers) {
            for (String line : vs.restoreLines()) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    /**
     * {@code ipset restore} input: every set (kube-proxy creates them all, empty or not), then its
     * members. Sets are created as kube-proxy creates them (hash sets: hashsize 1024, maxelem 65536;
     * port bitmaps: 0-65535).
     */
    public String ipsetRestore() {
        StringBuilder out = new StringBuilder();
        for (IpvsSet s : IpvsSet.values()) {
            out.append(createLine(s, s.name(family))).append('\n');
            for (String member : sets.get(s)) {
                out.append("add ")
                        .append(s.name(family))
                        .append(' ')
                        .append(member)
                        .append('\n');
            }
        }
        return out.toString();
    }

    /** The {@code create} line of a set as kube-proxy creates it, under the name {@code as}. */
    public String createLine(IpvsSet s, String as) {
        return "create " + as + " " + s.type()
                + (s.bitmap()
                        ? " range 0-65535"
                        : " family " + (family == IpFamily.IPV4 ? "inet" : "inet6") + " hashsize 1024 maxelem 65536");
    }

    /** {@code iptables-restore --noflush} input, nat then filter, as kube-proxy's IPVS proxier writes them. */
    public String iptablesRestore() {
        StringBuilder out = new StringBuilder("*nat\n");
        NAT_CHAINS.forEach(c -> out.append(':').append(c).append(" - [0:0]\n"));
        natRules.forEach(r -> out.append(r).append('\n'));
        out.append("COMMIT\n*filter\n");
        FILTER_CHAINS.forEach(c -> out.append(':').append(c).append(" - [0:0]\n"));
        filterRules.forEach(r -> out.append(r).append('\n'));
        return out.append("COMMIT\n").toString();
    }

    /**
     * The three inputs one after the other, each after a {@code ######## TOOL ########} line: what
     * {@code compile --mode ipvs} prints and the api serves for a node in IPVS mode.
     */
    public String render() {
        return section("ipvsadm-restore")
                + ipvsadmRestore()
                + section("ipset restore")
                + ipsetRestore()
                + section("iptables-restore --noflush")
                + iptablesRestore();
    }

    private static String section(String tool) {
        return "######## " + tool + " ########\n";
    }

    /** The iptables rules IPVS mode needs, counted: the restore rules and the jumps. */
    public int iptablesRuleCount() {
        return natRules.size() + filterRules.size() + JUMPS.size();
    }

    public int realServerCount() {
        return virtualServers.stream().mapToInt(v -> v.realServers().size()).sum();
    }

    public int setMemberCount() {
        return sets.values().stream().mapToInt(SortedSet::size).sum();
    }
}
