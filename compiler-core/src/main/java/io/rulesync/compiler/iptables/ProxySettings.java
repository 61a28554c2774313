package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.Hex;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The kube-proxy settings that shape the rules, for one IP family.
 *
 * @param clusterCidrs          the pod CIDRs (kube-proxy's {@code --cluster-cidr}, local-traffic detector
 *                              "ClusterCIDR"); at most one per family. Without one for this family
 *                              there is no detector: no off-cluster masquerade rule, no "pod traffic"
 *                              short-circuit.
 * @param masqueradeAll         {@code --masquerade-all}: SNAT every packet sent to a ClusterIP
 * @param masqueradeMark        the mark as kube-proxy prints it, e.g. {@code 0x00004000} for bit 14
 * @param localhostNodePorts    {@code --iptables-localhost-nodeports} (IPv4 only)
 * @param randomFully           the host's iptables supports {@code MASQUERADE --random-fully} (1.6.2+)
 * @param nodePortAddresses     {@code --nodeport-addresses}; empty means every local address
 * @param conntrackTcpBeLiberal the sysctl {@code nf_conntrack_tcp_be_liberal} is set: no INVALID drop rule
 */
public record ProxySettings(
        IpFamily family,
        List<Cidr> clusterCidrs,
        boolean masqueradeAll,
        String masqueradeMark,
        boolean localhostNodePorts,
        boolean randomFully,
        List<Cidr> nodePortAddresses,
        boolean conntrackTcpBeLiberal) {

    public static final int DEFAULT_MASQUERADE_BIT = 14;
    private static final IpAddress IPV4_LOOPBACK = IpAddress.parse("127.0.0.1");

    public ProxySettings {
        Objects.requireNonNull(family, "family");
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
        if (clusterCidrs.stream().filter(c -> c.family() == IpFamily.IPV4).count() > 1
                || clusterCidrs.stream()
                                .filter(c -> c.family() == IpFamily.IPV6)
                                .count()
                        > 1) {
            throw new IllegalArgumentException("cluster CIDRs: at most one per IP family");
        }
        try {
            Hex.parse(masqueradeMark);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("masquerade mark must look like 0x4000, not '" + masqueradeMark + "'");
        }
    }

    /** kube-proxy's defaults: no cluster CIDR, mark bit 14, localhost NodePorts on, --random-fully supported. */
    public static ProxySettings defaults(IpFamily family) {
        return new ProxySettings(
                family, List.of(), false, markForBit(DEFAULT_MASQUERADE_BIT), true, true, List.of(), false);
    }

    public ProxySettings withFamily(IpFamily f) {
        return new ProxySettings(
                f,
                clusterCidrs,
                masqueradeAll,
                masqueradeMark,
                localhostNodePorts,
                randomFully,
                nodePortAddresses,
                conntrackTcpBeLiberal);
    }

    public ProxySettings withClusterCidrs(List<Cidr> cidrs) {
        return new ProxySettings(
                family,
                cidrs,
                masqueradeAll,
                masqueradeMark,
                localhostNodePorts,
                randomFully,
                nodePortAddresses,
                conntrackTcpBeLiberal);
    }

    /** The mark for {@code --iptables-masquerade-bit}, formatted like Go's {@code %#08x}: 14 gives 0x00004000. */
    public static String markForBit(int bit) {
        if (bit < 0 || bit > 31) {
            throw new IllegalArgumentException("masquerade bit must be 0-31, not " + bit);
        }
        return String.format("0x%08x", 1L << bit);
    }

    /** The local-traffic detector's CIDR for this family, when there is one. */
    public Optional<Cidr> localDetector() {
        return clusterCidrs.stream().filter(c -> c.family() == family).findFirst();
    }

    /** The NodePort CIDRs of this family; empty (or a zero-length prefix) means "all local addresses". */
    public List<Cidr> nodePortCidrs() {
        List<Cidr> mine =
                nodePortAddresses.stream().filter(c -> c.family() == family).toList();
        return mine.stream().anyMatch(c -> c.prefix() == 0) ? List.of() : mine;
    }

    /**
     * Whether localhost NodePorts are really in effect: IPv4 only, and only when the NodePort
     * addresses include 127.0.0.1 (kube-proxy turns the option off otherwise).
     */
    boolean effectiveLocalhostNodePorts() {
        if (family != IpFamily.IPV4 || !localhostNodePorts) {
            return false;
        }
        List<Cidr> cidrs = nodePortCidrs();
        return cidrs.isEmpty() || cidrs.stream().anyMatch(c -> c.contains(IPV4_LOOPBACK));
    }
}
