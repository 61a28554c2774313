package io.rulesync.model.cluster;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A Node: its name, its topology zone (label {@code topology.kubernetes.io/zone}, empty when unset),
 * its addresses in {@code status.addresses} order, and all its labels, sorted by key (the zone among them).
 *
 * <p>Rules read only the name, the zone and the addresses ({@link #sameForRules}); the other labels are carried for
 * staged rollout, whose waves may select nodes by label.
 */
public record Node(String name, String zone, List<NodeAddress> addresses, SortedMap<String, String> labels)
        implements ClusterObject {
    public static final String ZONE_LABEL = "topology.kubernetes.io/zone";

    public Node {
        KubernetesNames.require("name", name, KubernetesNames.checkSubdomain(name));
        Objects.requireNonNull(zone, "zone");
        addresses = List.copyOf(addresses);
        TreeMap<String, String> l = new TreeMap<>(labels);
        String labelled = l.get(ZONE_LABEL);
        if (labelled == null && !zone.isEmpty()) {
            l.put(ZONE_LABEL, zone);
        } else if (labelled != null && !labelled.equals(zone)) {
            throw new IllegalArgumentException(
                    "Node " + name + ": zone '" + zone + "' but label " + ZONE_LABEL + "=" + labelled);
        }
        labels = Collections.unmodifiableSortedMap(l);
    }

    /** A node with no labels but its zone's. */
    public Node(String name, String zone, List<NodeAddress> addresses) {
        this(name, zone, addresses, new TreeMap<>());
    }

    /** A node with all of {@code labels}; its zone is theirs. */
    public static Node labelled(String name, Map<String, String> labels, List<NodeAddress> addresses) {
        return new Node(name, labels.getOrDefault(ZONE_LABEL, ""), addresses, new TreeMap<>(labels));
    }

    /** Whether {@code other} compiles to the same rules: it differs at most in labels other than the zone. */
    public boolean sameForRules(Node other) {
        return other != null && name.equals(other.name) && zone.equals(other.zone) && addresses.equals(other.addresses);
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
