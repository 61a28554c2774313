package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What one unit contributes to a node's IPVS configuration, stored in the same fragment as its
 * iptables rules ({@link io.rulesync.model.rules.RuleFragment#ipvs()}), so that versions, deltas,
 * snapshots and node classes serve both modes alike.
 *
 * <p>A service port's part is the same for every node of its node class, except for what only the
 * node itself decides, which the part leaves open and {@link IpvsAssembly} fills in per node: which
 * of its addresses serve NodePorts ({@code @node}), which endpoints are its own (hairpin entries,
 * per node name), and which service addresses are its own (not bound to {@code kube-ipvs0}). The
 * fixed unit's part carries the nodes' addresses and the fixed iptables rules, each with the set
 * that must have members for kube-proxy to write it.
 *
 * @param services    virtual servers; a null address stands for each NodePort address of the node
 * @param sets        set members
 * @param loopBacks   hairpin entries, for the node that runs the endpoint
 * @param binds       addresses bound to {@code kube-ipvs0} unless they are the node's own
 * @param rules       iptables rules: the fixed unit's in order; a port's load-balancer drops
 * @param nodes       the fixed unit's: the addresses of the nodes this variant serves
 */
public record IpvsPart(
        List<ServiceTemplate> services,
        List<SetEntry> sets,
        List<LoopBack> loopBacks,
        List<IpAddress> binds,
        List<Rule> rules,
        List<NodeAddresses> nodes) {

    public static final IpvsPart EMPTY = new IpvsPart(List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
    /** Stands for each NodePort address of the node, in addresses and set members. */
    public static final String NODE = "@node";
    /** The fixed rule after which the service ports' rules go. */
    public static final String PORT_RULES = "@port-rules";

    public IpvsPart {
        services = List.copyOf(services);
        sets = List.copyOf(sets);
        loopBacks = List.copyOf(loopBacks);
        binds = List.copyOf(binds);
        rules = List.copyOf(rules);
        nodes = List.copyOf(nodes);
    }

    public boolean isEmpty() {
        return equals(EMPTY);
    }

    /** A virtual server; {@code address} null: one per NodePort address of the node. */
    public record ServiceTemplate(
            IpAddress address,
            int port,
            Protocol protocol,
            String scheduler,
            int persistenceSeconds,
            List<RealServer> realServers) {
        public ServiceTemplate {
            Objects.requireNonNull(protocol, "protocol");
            checkPort("port", port);
            String bad = Service.checkIpvsScheduler(Objects.requireNonNull(scheduler, "scheduler"));
            if (bad != null) {
                throw new IllegalArgumentException("scheduler: " + bad);
            }
            if (persistenceSeconds < 0) {
                throw new IllegalArgumentException("persistence: " + persistenceSeconds + " is negative");
            }
            realServers = realServers.stream().sorted().toList();
            for (RealServer r : realServers) {
                checkPort("real server port", r.port());
            }
        }

        public VirtualServer at(IpAddress a) {
            return new VirtualServer(a, port, protocol, scheduler, persistenceSeconds, realServers);
        }
    }

    /**
     * A member of one set. {@code nodePortOnly}: kube-proxy writes it only on nodes that have a
     * NodePort address; a member starting with {@value #NODE} is written once per such address.
     * The compiler writes members from typed values; {@link #parse} checks those read as text.
     */
    public record SetEntry(IpvsSet set, String member, boolean nodePortOnly) {
        public SetEntry {
            Objects.requireNonNull(set, "set");
            Objects.requireNonNull(member, "member");
            if (member.startsWith(NODE) && !nodePortOnly) {
                throw new IllegalArgumentException(set.name() + " member: " + NODE + " needs a NodePort entry");
            }
        }

        /** Why the member does not have the form of its set's type, or null. */
        String problem() {
            String bad =
                    set.checkMember(member.startsWith(NODE) ? "192.0.2.1" + member.substring(NODE.length()) : member);
            return bad == null ? null : set.name() + " member: " + bad;
        }
    }

    /** A hairpin entry (KUBE-LOOP-BACK) for the node that runs the endpoint; checked by {@link #parse} like set members. */
    public record LoopBack(String node, String member) {
        public LoopBack {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(member, "member");
        }

        String problem() {
            String bad = KubernetesNames.checkSubdomain(node);
            if (bad != null) {
                return "node: " + bad;
            }
            bad = IpvsSet.LOOP_BACK.checkMember(member);
            return bad == null ? null : "loop-back member: " + bad;
        }
    }

    /**
     * An iptables rule of table {@code nat} or {@code filter}, written only when {@code requires}
     * (if any) has members on the node. The text is a whole {@code -A CHAIN ...} line.
     */
    public record Rule(String table, IpvsSet requires, String text) {
        public Rule {
            if (!table.equals("nat") && !table.equals("filter")) {
                throw new IllegalArgumentException(
                        "table: '" + KubernetesNames.printable(table) + "' is not nat or filter");
            }
            if (!text.equals(PORT_RULES) && !text.startsWith("-A KUBE-")) {
                throw new IllegalArgumentException(
                        "rule: '" + KubernetesNames.printable(text) + "' does not append to a KUBE- chain");
            }
            if (text.indexOf('\n') >= 0 || text.indexOf('\r') >= 0) {
                throw new IllegalArgumentException("rule: holds a line break");
            }
        }
    }

    /** A node's addresses of the family, and those of them that serve NodePorts. */
    public record NodeAddresses(String node, List<IpAddress> addresses, List<IpAddress> nodePortAddresses) {
        public NodeAddresses {
            checkNodeName(node);
            addresses = addresses.stream().sorted().toList();
            nodePortAddresses = nodePortAddresses.stream().sorted().toList();
        }
    }

    /** The part's lines, the body of a fragment's {@code *ipvs} section. */
    public List<String> lines() {
        List<String> out = new ArrayList<>();
        for (NodeAddresses n : nodes) {
            out.add("node " + n.node() + " " + list(n.addresses()) + " " + list(n.nodePortAddresses()));
        }
        for (ServiceTemplate s : services) {
            out.add("service " + s.protocol().name() + " "
                    + (s.address() == null ? NODE : s.address().toString()) + " " + s.port() + " " + s.scheduler() + " "
                    + s.persistenceSeconds());
            for (RealServer r : s.realServers()) {
                out.add("real " + r.address() + " " + r.port() + " " + r.weight());
            }
        }
        for (SetEntry e : sets) {
            out.add("set " + (e.nodePortOnly() ? "nodeport " : "always ")
                    + e.set().name() + " " + e.member());
        }
        for (LoopBack l : loopBacks) {
            out.add("loopback " + l.node() + " " + l.member());
        }
        for (IpAddress b : binds) {
            out.add("bind " + b);
        }
        for (Rule r : rules) {
            out.add("rule " + r.table() + " "
                    + (r.requires() == null ? "-" : r.requires().name()) + " " + r.text());
        }
        return out;
    }

    /** Reads {@link #lines()} back; throws {@link IllegalArgumentException} naming the line. */
    public static IpvsPart parse(List<String> lines, int firstLineNo) {
        List<ServiceTemplate> services = new ArrayList<>();
        List<SetEntry> sets = new ArrayList<>();
        List<LoopBack> loopBacks = new ArrayList<>();
        List<IpAddress> binds = new ArrayList<>();
        List<Rule> rules = new ArrayList<>();
        List<NodeAddresses> nodes = new ArrayList<>();
        ServiceTemplate open = null;
        List<RealServer> reals = new ArrayList<>();
        int lineNo = firstLineNo - 1;
        for (String line : lines) {
            lineNo++;
            try {
                String[] f = words(line, line.startsWith("rule ") ? 4 : -1);
                if (!f[0].equals("real") && open != null) {
                    services.add(new ServiceTemplate(
                            open.address(),
                            open.port(),
                            open.protocol(),
                            open.scheduler(),
                            open.persistenceSeconds(),
                            reals));
                    open = null;
                    reals = new ArrayList<>();
                }
                switch (f[0]) {
                    case "node" -> {
                        fields(f, 4);
                        nodes.add(new NodeAddresses(f[1], addresses(f[2]), addresses(f[3])));
                    }
                    case "service" -> {
                        fields(f, 6);
                        open = new ServiceTemplate(
                                f[2].equals(NODE) ? null : IpAddress.parse(f[2]),
                                number(f[3]),
                                Protocol.valueOf(f[1]),
                                f[4],
                                number(f[5]),
                                List.of());
                    }
                    case "real" -> {
                        fields(f, 4);
                        if (open == null) {
                            throw new IllegalArgumentException("real server outside a service");
                        }
                        reals.add(new RealServer(IpAddress.parse(f[1]), number(f[2]), number(f[3])));
                    }
                    case "set" -> {
                        fields(f, 4);
                        if (!f[1].equals("always") && !f[1].equals("nodeport")) {
                            throw new IllegalArgumentException(
                                    "'" + KubernetesNames.printable(f[1]) + "' is not always or nodeport");
                        }
                        SetEntry e = new SetEntry(IpvsSet.valueOf(f[2]), f[3], f[1].equals("nodeport"));
                        String bad = e.problem();
                        if (bad != null) {
                            throw new IllegalArgumentException(bad);
                        }
                        sets.add(e);
                    }
                    case "loopback" -> {
                        fields(f, 3);
                        LoopBack l = new LoopBack(f[1], f[2]);
                        String bad = l.problem();
                        if (bad != null) {
                            throw new IllegalArgumentException(bad);
                        }
                        loopBacks.add(l);
                    }
                    case "bind" -> {
                        fields(f, 2);
                        binds.add(IpAddress.parse(f[1]));
                    }
                    case "rule" -> {
                        fields(f, 4);
                        rules.add(new Rule(f[1], f[2].equals("-") ? null : IpvsSet.valueOf(f[2]), f[3]));
                    }
                    default ->
                        throw new IllegalArgumentException("unknown entry '" + KubernetesNames.printable(f[0]) + "'");
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + lineNo + ": " + e.getMessage(), e);
            }
        }
        if (open != null) {
            services.add(new ServiceTemplate(
                    open.address(), open.port(), open.protocol(), open.scheduler(), open.persistenceSeconds(), reals));
        }
        return new IpvsPart(services, sets, loopBacks, binds, rules, nodes);
    }

    /** The same part with its lists in a canonical order, so that equal content renders equal text. */
    public IpvsPart sorted() {
        Comparator<ServiceTemplate> svc = Comparator.comparing((ServiceTemplate s) ->
                        s.address() == null ? "" : s.address().toString())
                .thenComparing(ServiceTemplate::protocol)
                .thenComparingInt(ServiceTemplate::port);
        return new IpvsPart(
                services.stream().sorted(svc).toList(),
                sets.stream()
                        .sorted(Comparator.comparing(SetEntry::set).thenComparing(SetEntry::member))
                        .distinct()
                        .toList(),
                loopBacks.stream()
                        .sorted(Comparator.comparing(LoopBack::node).thenComparing(LoopBack::member))
                        .distinct()
                        .toList(),
                binds.stream().sorted().distinct().toList(),
                rules,
                nodes.stream().sorted(Comparator.comparing(NodeAddresses::node)).toList());
    }

    /**
     * What {@code line.split(" ", limit)} gives for a limit of -1 or above 0, without its regex
     * check, list and copy: a snapshot has tens of thousands of these lines.
     */
    private static String[] words(String line, int limit) {
        int n = 1;
        for (int i = line.indexOf(' '); i >= 0 && (limit <= 0 || n < limit); i = line.indexOf(' ', i + 1)) {
            n++;
        }
        String[] out = new String[n];
        int start = 0;
        for (int k = 0; k < n - 1; k++) {
            int space = line.indexOf(' ', start);
            out[k] = line.substring(start, space);
            start = space + 1;
        }
        out[n - 1] = line.substring(start);
        return out;
    }

    private static void fields(String[] f, int n) {
        if (f.length != n) {
            throw new IllegalArgumentException(f[0] + " takes " + (n - 1) + " fields, found " + (f.length - 1));
        }
    }

    private static int number(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + KubernetesNames.printable(s) + "' is not a number");
        }
    }

    private static void checkPort(String field, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(field + ": " + port + " is out of range (1-65535)");
        }
    }

    private static void checkNodeName(String node) {
        String bad = KubernetesNames.checkSubdomain(Objects.requireNonNull(node, "node"));
        if (bad != null) {
            throw new IllegalArgumentException("node: " + bad);
        }
    }

    private static String list(List<IpAddress> ips) {
        return ips.isEmpty()
                ? "-"
                : String.join(",", ips.stream().map(IpAddress::toString).toList());
    }

    private static List<IpAddress> addresses(String s) {
        if (s.equals("-")) {
            return List.of();
        }
        List<IpAddress> out = new ArrayList<>();
        for (String a : s.split(",", -1)) {
            out.add(IpAddress.parse(a));
        }
        return out;
    }
}
