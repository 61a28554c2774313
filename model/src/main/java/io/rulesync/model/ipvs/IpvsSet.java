package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import java.util.List;

/**
 * The ipsets of kube-proxy's IPVS mode ({@code ipsetInfo} in pkg/proxy/ipvs/proxier.go), in its
 * order, with their types and the comments its iptables rules carry.
 */
public enum IpvsSet {
    LOOP_BACK(
            "KUBE-LOOP-BACK",
            "hash:ip,port,ip",
            "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose"),
    CLUSTER_IP("KUBE-CLUSTER-IP", "hash:ip,port", "Kubernetes service cluster ip + port for masquerade purpose"),
    EXTERNAL_IP(
            "KUBE-EXTERNAL-IP",
            "hash:ip,port",
            "Kubernetes service external ip + port for masquerade and filter purpose"),
    EXTERNAL_IP_LOCAL(
            "KUBE-EXTERNAL-IP-LOCAL",
            "hash:ip,port",
            "Kubernetes service external ip + port with externalTrafficPolicy=local"),
    LOAD_BALANCER("KUBE-LOAD-BALANCER", "hash:ip,port", "Kubernetes service lb portal"),
    LOAD_BALANCER_FW(
            "KUBE-LOAD-BALANCER-FW",
            "hash:ip,port",
            "Kubernetes service load balancer ip + port for load balancer with sourceRange"),
    LOAD_BALANCER_LOCAL(
            "KUBE-LOAD-BALANCER-LOCAL",
            "hash:ip,port",
            "Kubernetes service load balancer ip + port with externalTrafficPolicy=local"),
    LOAD_BALANCER_SOURCE_IP(
            "KUBE-LOAD-BALANCER-SOURCE-IP",
            "hash:ip,port,ip",
            "Kubernetes service load balancer ip + port + source IP for packet filter purpose"),
    LOAD_BALANCER_SOURCE_CIDR(
            "KUBE-LOAD-BALANCER-SOURCE-CIDR",
            "hash:ip,port,net",
            "Kubernetes service load balancer ip + port + source cidr for packet filter purpose"),
    NODE_PORT_TCP("KUBE-NODE-PORT-TCP", "bitmap:port", "Kubernetes nodeport TCP port for masquerade purpose"),
    NODE_PORT_LOCAL_TCP(
            "KUBE-NODE-PORT-LOCAL-TCP", "bitmap:port", "Kubernetes nodeport TCP port with externalTrafficPolicy=local"),
    NODE_PORT_UDP("KUBE-NODE-PORT-UDP", "bitmap:port", "Kubernetes nodeport UDP port for masquerade purpose"),
    NODE_PORT_LOCAL_UDP(
            "KUBE-NODE-PORT-LOCAL-UDP", "bitmap:port", "Kubernetes nodeport UDP port with externalTrafficPolicy=local"),
    NODE_PORT_SCTP(
            "KUBE-NODE-PORT-SCTP-HASH",
            "hash:ip,port",
            "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'"),
    NODE_PORT_LOCAL_SCTP(
            "KUBE-NODE-PORT-LOCAL-SCTP-HASH",
            "hash:ip,port",
            "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"),
    HEALTH_CHECK_NODE_PORT("KUBE-HEALTH-CHECK-NODE-PORT", "bitmap:port", "Kubernetes health check node port"),
    IPVS_IPS("KUBE-IPVS-IPS", "hash:ip", "Addresses on the ipvs interface");

    /** ipset's longest set name. */
    public static final int MAX_NAME = 31;

    private final String ipv4Name;
    private final String type;
    private final String comment;
    // The type's components (ip, port, net), split once: every member read is checked against them.
    private final String[] kinds;

    IpvsSet(String ipv4Name, String type, String comment) {
        this.ipv4Name = ipv4Name;
        this.type = type;
        this.comment = comment;
        this.kinds = type.substring(type.indexOf(':') + 1).split(",");
    }

    /** The set's name in one family: IPv6 sets are {@code KUBE-6-...}, cut to 31 characters (kube-proxy's NewIPSet). */
    public String name(IpFamily family) {
        if (family == IpFamily.IPV4) {
            return ipv4Name;
        }
        String v6 = ipv4Name.replaceFirst("^KUBE-", "KUBE-6-");
        return v6.length() > MAX_NAME ? v6.substring(0, MAX_NAME) : v6;
    }

    public String type() {
        return type;
    }

    /** The comment of the iptables rules that match the set. */
    public String comment() {
        return comment;
    }

    public boolean bitmap() {
        return type.startsWith("bitmap:");
    }

    /**
     * What is wrong with a member for this set's type, or null: members reach {@code ipset restore},
     * so each component must parse as what the type says ({@code 10.0.0.1,tcp:80,10.0.0.0/8}).
     */
    public String checkMember(String member) {
        String[] parts = member.split(",", -1);
        if (parts.length != kinds.length) {
            return "'" + KubernetesNames.printable(member) + "' does not have the form " + type;
        }
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            boolean ok = switch (kinds[i]) {
                case "ip" -> parses(() -> IpAddress.parse(p));
                case "net" -> parses(() -> Cidr.parse(p));
                case "port" -> bitmap() ? port(p) : protoPort(p);
                default -> false;
            };
            if (!ok) {
                return "'" + KubernetesNames.printable(member) + "' does not have the form " + type;
            }
        }
        return null;
    }

    private static boolean protoPort(String p) {
        int colon = p.indexOf(':');
        return colon > 0
                && List.of("tcp", "udp", "sctp").contains(p.substring(0, colon))
                && port(p.substring(colon + 1));
    }

    private static boolean port(String p) {
        if (p.isEmpty() || p.length() > 5) {
            return false;
        }
        for (int i = 0; i < p.length(); i++) {
            if (p.charAt(i) < '0' || p.charAt(i) > '9') {
                return false;
            }
        }
        int n = Integer.parseInt(p);
        return n >= 0 && n <= 65535;
    }

    private static boolean parses(Runnable r) {
        try {
            r.run();
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
