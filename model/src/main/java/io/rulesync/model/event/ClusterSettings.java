package io.rulesync.model.event;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Service;
import java.util.List;
import java.util.Objects;

/**
 * How a cluster's kube-proxy would be configured: which IP families get rule sets, the pod CIDRs
 * (local-traffic detector), masquerade-all, the masquerade mark bit, the NodePort addresses and
 * the IPVS scheduler (which a Service may override by annotation).
 * Part of the event stream, so that a version is a pure function of the events before it.
 */
public record ClusterSettings(
        List<IpFamily> families,
        List<Cidr> clusterCidrs,
        boolean masqueradeAll,
        int masqueradeBit,
        List<Cidr> nodePortAddresses,
        String ipvsScheduler) {

    /** kube-proxy's default {@code --ipvs-scheduler}. */
    public static final String DEFAULT_IPVS_SCHEDULER = "rr";

    public static final ClusterSettings DEFAULT =
            new ClusterSettings(List.of(IpFamily.IPV4), List.of(), false, 14, List.of());

    /** Settings with the default IPVS scheduler. */
    public ClusterSettings(
            List<IpFamily> families,
            List<Cidr> clusterCidrs,
            boolean masqueradeAll,
            int masqueradeBit,
            List<Cidr> nodePortAddresses) {
        this(families, clusterCidrs, masqueradeAll, masqueradeBit, nodePortAddresses, DEFAULT_IPVS_SCHEDULER);
    }

    public ClusterSettings {
        families = List.copyOf(families.stream().distinct().sorted().toList());
        if (families.isEmpty()) {
            throw new IllegalArgumentException("families: at least one IP family");
        }
        clusterCidrs = List.copyOf(clusterCidrs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
        for (IpFamily f : IpFamily.values()) {
            if (clusterCidrs.stream().filter(c -> c.family() == f).count() > 1) {
                throw new IllegalArgumentException("clusterCIDRs: at most one per IP family");
            }
        }
        if (masqueradeBit < 0 || masqueradeBit > 31) {
            throw new IllegalArgumentException("masqueradeBit: " + masqueradeBit + " is out of range (0-31)");
        }
        String bad = Service.checkIpvsScheduler(Objects.requireNonNull(ipvsScheduler, "ipvsScheduler"));
        if (bad != null) {
            throw new IllegalArgumentException("ipvsScheduler: " + bad);
        }
    }
}
