package io.rulesync.model.cluster;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A Node: its name, its topology zone (label {@code topology.kubernetes.io/zone}, empty when unset)
 * and its addresses in {@code status.addresses} order.
 */
public record Node(String name, String zone, List<NodeAddress> addresses) implements ClusterObject {
    public Node {
        KubernetesNames.require("name", name, KubernetesNames.checkSubdomain(name));
        Objects.requireNonNull(zone, "zone");
        addresses = List.copyOf(addresses);
    }

    /**
     * The node's primary IP of a family, chosen like kubelet does: the first InternalIP, else the
     * first ExternalIP.
     */
    public Optional<IpAddress> primaryIP(IpFamily family) {
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (NodeAddress a : addresses) {
                if (a.type().equals(type) && a.address().family() == family) {
                    return Optional.of(a.address());
                }
            }
        }
        return Optional.empty();
    }

    /** One entry of {@code status.addresses} that holds an IP (Hostname entries are not kept). */
    public record NodeAddress(String type, IpAddress address) {
        public NodeAddress {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(address, "address");
        }
    }

    @Override
    public String kind() {
        return "Node";
    }

    @Override
    public String key() {
        return name;
    }
}
