package io.rulesync.model.nftables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What one unit contributes to a node's {@code kube-proxy} table in nftables mode, stored in the same fragment as its
 * iptables rules and IPVS part ({@link io.rulesync.model.rules.RuleFragment#nftables()}), so that every mode shares
 * versions, deltas and node classes.
 *
 * <p>The part holds kube-proxy's decisions, typed, not nft text: for a service port, its addresses and ports, its
 * policies, and the endpoints each of its chains picks from on this node class; for the fixed unit, the masquerade mark
 * and which node addresses take NodePort traffic. {@link NftAssembly} renders a node's table from them, the same code
 * in the compiler, the api and the agent. So what reaches {@code nft} is built from checked values only: a part read
 * from text ({@link #parse}) has every address, name and number checked by its type.
 */
public sealed interface NftPart {
    /** No nftables part: the fragment was written before nftables mode. */
    NftPart NONE = new None();

    /** The body of a fragment's {@code *nftables} section. */
    List<String> lines();

    record None() implements NftPart {
        @Override
        public List<String> lines() {
            return List.of();
        }
    }

    /**
     * The fixed unit: the masquerade mark, and where NodePorts are served: on every local address
     * ({@code --nodeport-addresses} holds {@code 0.0.0.0/0} or {@code ::/0}), or on the addresses listed per node.
     *
     * @param nodes the NodePort addresses of each node this variant serves (ignored when {@code everywhere})
     */
    record Fixed(long mark, boolean nodePortsEverywhere, List<NodePorts> nodes) implements NftPart {
        public Fixed {
            if (mark <= 0 || mark > 0xffffffffL || Long.bitCount(mark) != 1) {
                throw new IllegalArgumentException("mark: " + mark + " is not one bit of a 32-bit mark");
            }
            nodes = List.copyOf(nodes);
        }

        public String markText() {
            return "0x" + Long.toHexString(mark);
        }

        /** The NodePort addresses of {@code node} (empty: none, or not a node of this variant). */
        public List<IpAddress> nodePortAddresses(String node) {
            for (NodePorts n : nodes) {
                if (n.node().equals(node)) {
                    return n.addresses();
                }
            }
            return List.of();
        }

        @Override
        public List<String> lines() {
            List<String> out = new ArrayList<>();
            out.add("fixed " + markText() + " " + (nodePortsEverywhere ? "everywhere" : "listed"));
            for (NodePorts n : nodes) {
                out.add("nodeports " + n.node() + join(n.addresses()));
            }
            return out;
        }
    }

    /** A node's addresses that take NodePort traffic. */
    record NodePorts(String node, List<IpAddress> addresses) {
        public NodePorts {
            String bad = KubernetesNames.checkSubdomain(node);
            if (bad != null) {
                throw new IllegalArgumentException("node: " + bad);
            }
            addresses = addresses.stream().sorted().distinct().toList();
            for (IpAddress a : addresses) {
                if (a.isLoopback()) {
                    throw new IllegalArgumentException("node " + node + ": NodePort address " + a + " is loopback");
                }
            }
        }
    }

    /** An endpoint: where an endpoint chain DNATs to. */
    record Endpoint(IpAddress ip, int port) {
        public Endpoint {
            Objects.requireNonNull(ip, "ip");
            checkPort("endpoint port", port, false);
        }

        @Override
        public String toString() {
            return ip.withPort(port);
        }

        static Endpoint parse(String s) {
            int colon = s.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException(
                        "endpoint '" + KubernetesNames.printable(s) + "' is not address:port");
            }
            String host = s.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            Endpoint e = new Endpoint(IpAddress.parse(host), number(s.substring(colon + 1)));
            if (!e.toString().equals(s)) {
                throw new IllegalArgumentException(
                        "endpoint '" + KubernetesNames.printable(s) + "' is not in canonical form");
            }
            return e;
        }
    }

    /**
     * One service port on one node class.
     *
     * @param externalIPs     external IPs, then {@code loadBalancerIPs}: served through the external chain
     * @param sourceRanges    {@code loadBalancerSourceRanges}: with load-balancer IPs, a firewall chain
     * @param allowVipSources the node's address lies in a source range, so the VIPs are allowed as sources too
     * @param affinitySeconds ClientIP affinity's timeout; 0: none
     * @param masqueradeAll   {@code --masquerade-all}
     * @param podCidr         the local-traffic detector's CIDR (null: none)
     * @param hasEndpoints    the port has a usable endpoint somewhere in the cluster
     * @param clusterChain    the endpoints the {@code service-} chain picks from (empty: no such chain)
     * @param localChain      the endpoints the {@code local-} chain picks from (empty: no such chain)
     * @param reachable       every endpoint with a chain on this node class, in order
     */
    record Port(
            Unit.Port unit,
            IpAddress clusterIP,
            int port,
            int nodePort,
            List<IpAddress> externalIPs,
            List<IpAddress> loadBalancerIPs,
            List<Cidr> sourceRanges,
            boolean allowVipSources,
            boolean internalLocal,
            boolean externalLocal,
            int affinitySeconds,
            boolean masqueradeAll,
            Cidr podCidr,
            boolean hasEndpoints,
            List<Endpoint> clusterChain,
            List<Endpoint> localChain,
            List<Endpoint> reachable)
            implements NftPart {
        /** kube-proxy's largest ClientIP timeout (a day). */
        static final int MAX_AFFINITY = 86_400;

        public Port {
            Objects.requireNonNull(unit, "unit");
            Objects.requireNonNull(clusterIP, "clusterIP");
            checkPort("port", port, false);
            checkPort("nodePort", nodePort, true);
            externalIPs = List.copyOf(externalIPs);
            loadBalancerIPs = List.copyOf(loadBalancerIPs);
            sourceRanges = List.copyOf(sourceRanges);
            clusterChain = List.copyOf(clusterChain);
            localChain = List.copyOf(localChain);
            reachable = List.copyOf(reachable);
            if (affinitySeconds < 0 || affinitySeconds > MAX_AFFINITY) {
                throw new IllegalArgumentException(
                        "affinity: " + affinitySeconds + " is not 0.." + MAX_AFFINITY + " seconds");
            }
            IpFamily family = clusterIP.family();
            List<IpAddress> all = new ArrayList<>(externalIPs);
            all.addAll(loadBalancerIPs);
            reachable.forEach(e -> all.add(e.ip()));
            for (IpAddress a : all) {
                if (a.family() != family) {
                    throw new IllegalArgumentException(unit.id() + ": " + a + " is not of the ClusterIP's family");
                }
            }
            for (Cidr c : sourceRanges) {
                if (c.family() != family) {
                    throw new IllegalArgumentException(
                            unit.id() + ": source range " + c + " is not of the ClusterIP's family");
                }
            }
            if (podCidr != null && podCidr.family() != family) {
                throw new IllegalArgumentException(
                        unit.id() + ": pod CIDR " + podCidr + " is not of the ClusterIP's family");
            }
            // Every chain a rule jumps to is one this part declares.
            Set<Endpoint> known = new HashSet<>(reachable);
            if (known.size() != reachable.size()
                    || !known.containsAll(clusterChain)
                    || !known.containsAll(localChain)) {
                throw new IllegalArgumentException(
                        unit.id() + ": the chains' endpoints are not the reachable ones, each once");
            }
            if ((!clusterChain.isEmpty() || !localChain.isEmpty()) && !hasEndpoints) {
                throw new IllegalArgumentException(unit.id() + ": endpoint chains without endpoints");
            }
        }

        public boolean externallyAccessible() {
            return nodePort != 0 || !externalIPs.isEmpty() || !loadBalancerIPs.isEmpty();
        }

        @Override
        public List<String> lines() {
            List<String> out = new ArrayList<>();
            out.add("port " + unit.id() + " " + clusterIP + " " + port + " " + nodePort + " " + affinitySeconds + " "
                    + (internalLocal ? "local" : "cluster") + " " + (externalLocal ? "local" : "cluster") + " "
                    + (hasEndpoints ? "endpoints" : "none") + " " + (masqueradeAll ? "masquerade-all" : "-") + " "
                    + (podCidr == null ? "-" : podCidr.toString()));
            if (!externalIPs.isEmpty()) {
                out.add("external" + join(externalIPs));
            }
            if (!loadBalancerIPs.isEmpty()) {
                out.add("lb" + join(loadBalancerIPs));
            }
            if (!sourceRanges.isEmpty()) {
                out.add("ranges " + (allowVipSources ? "vips" : "-") + join(sourceRanges));
            }
            if (!reachable.isEmpty()) {
                out.add("reachable" + join(reachable));
            }
            if (!clusterChain.isEmpty()) {
                out.add("cluster" + join(clusterChain));
            }
            if (!localChain.isEmpty()) {
                out.add("local" + join(localChain));
            }
            return out;
        }
    }

    /** Reads {@link #lines()} back; throws {@link IllegalArgumentException} naming the line. */
    static NftPart parse(List<String> lines, int firstLineNo) {
        if (lines.isEmpty()) {
            return NONE;
        }
        int lineNo = firstLineNo;
        try {
            String[] head = lines.get(0).split(" ", -1);
            if (head[0].equals("fixed")) {
                fields(head, 3);
                if (!head[1].startsWith("0x") || !Pattern.matches("[0-9a-f]{1,8}", head[1].substring(2))) {
                    throw new IllegalArgumentException(
                            "mark '" + KubernetesNames.printable(head[1]) + "' is not a hex number");
                }
                boolean everywhere = switch (head[2]) {
                    case "everywhere" -> true;
                    case "listed" -> false;
                    default ->
                        throw new IllegalArgumentException(
                                "'" + KubernetesNames.printable(head[2]) + "' is not everywhere or listed");
                };
                List<NodePorts> nodes = new ArrayList<>();
                for (String line : lines.subList(1, lines.size())) {
                    lineNo++;
                    String[] f = line.split(" ", -1);
                    if (f.length < 2 || !f[0].equals("nodeports")) {
                        throw new IllegalArgumentException("expected 'nodeports NODE ADDRESS...'");
                    }
                    List<IpAddress> ips = new ArrayList<>();
                    for (int i = 2; i < f.length; i++) {
                        ips.add(IpAddress.parse(f[i]));
                    }
                    nodes.add(new NodePorts(f[1], ips));
                }
                NftPart p = new Fixed(Long.parseLong(head[1].substring(2), 16), everywhere, nodes);
                return canonical(p, lines);
            }
            if (!head[0].equals("port")) {
                throw new IllegalArgumentException("expected 'fixed' or 'port'");
            }
            fields(head, 11);
            if (!(Unit.parse(head[1]) instanceof Unit.Port unit)) {
                throw new IllegalArgumentException(
                        "'" + KubernetesNames.printable(head[1]) + "' is not a service port");
            }
            List<IpAddress> external = List.of();
            List<IpAddress> lb = List.of();
            List<Cidr> ranges = List.of();
            boolean allowVips = false;
            List<Endpoint> reachable = List.of();
            List<Endpoint> cluster = List.of();
            List<Endpoint> local = List.of();
            for (String line : lines.subList(1, lines.size())) {
                lineNo++;
                String[] f = line.split(" ", -1);
                List<String> rest = List.of(f).subList(1, f.length);
                switch (f[0]) {
                    case "external" ->
                        external = rest.stream().map(IpAddress::parse).toList();
                    case "lb" -> lb = rest.stream().map(IpAddress::parse).toList();
                    case "ranges" -> {
                        if (rest.isEmpty()
                                || !(rest.get(0).equals("vips") || rest.get(0).equals("-"))) {
                            throw new IllegalArgumentException("expected 'ranges vips|- CIDR...'");
                        }
                        allowVips = rest.get(0).equals("vips");
                        ranges = rest.subList(1, rest.size()).stream()
                                .map(Cidr::parse)
                                .toList();
                    }
                    case "reachable" ->
                        reachable = rest.stream().map(Endpoint::parse).toList();
                    case "cluster" ->
                        cluster = rest.stream().map(Endpoint::parse).toList();
                    case "local" -> local = rest.stream().map(Endpoint::parse).toList();
                    default ->
                        throw new IllegalArgumentException("unexpected '" + KubernetesNames.printable(f[0]) + "'");
                }
            }
            lineNo = firstLineNo;
            NftPart p = new Port(
                    unit,
                    IpAddress.parse(head[2]),
                    number(head[3]),
                    number(head[4]),
                    external,
                    lb,
                    ranges,
                    allowVips,
                    policy(head[6]),
                    policy(head[7]),
                    number(head[5]),
                    flag(head[9], "masquerade-all"),
                    head[10].equals("-") ? null : Cidr.parse(head[10]),
                    endpoints(head[8]),
                    cluster,
                    local,
                    reachable);
            return canonical(p, lines);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("line " + lineNo + ": nftables part: " + e.getMessage(), e);
        }
    }

    /** A part's text has one form: anything that reads into a part but renders otherwise is refused. */
    private static NftPart canonical(NftPart p, List<String> lines) {
        if (!p.lines().equals(lines)) {
            throw new IllegalArgumentException("not in canonical form");
        }
        return p;
    }

    private static boolean policy(String s) {
        return switch (s) {
            case "local" -> true;
            case "cluster" -> false;
            default ->
                throw new IllegalArgumentException(
                        "policy '" + KubernetesNames.printable(s) + "' is not cluster or local");
        };
    }

    private static boolean flag(String s, String name) {
        if (!s.equals(name) && !s.equals("-")) {
            throw new IllegalArgumentException("'" + KubernetesNames.printable(s) + "' is not " + name + " or -");
        }
        return s.equals(name);
    }

    private static boolean endpoints(String s) {
        return switch (s) {
            case "endpoints" -> true;
            case "none" -> false;
            default ->
                throw new IllegalArgumentException("'" + KubernetesNames.printable(s) + "' is not endpoints or none");
        };
    }

    private static void fields(String[] f, int n) {
        if (f.length != n) {
            throw new IllegalArgumentException("expected " + n + " fields, not " + f.length);
        }
    }

    private static int number(String s) {
        if (s.isEmpty() || s.length() > 6 || !s.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("'" + KubernetesNames.printable(s) + "' is not a number");
        }
        return Integer.parseInt(s);
    }

    private static void checkPort(String what, int port, boolean zeroAllowed) {
        if (port < (zeroAllowed ? 0 : 1) || port > 65535) {
            throw new IllegalArgumentException(what + ": " + port + " is not a port");
        }
    }

    private static String join(List<?> items) {
        StringBuilder b = new StringBuilder();
        items.forEach(i -> b.append(' ').append(i));
        return b.toString();
    }
}
