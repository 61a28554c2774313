package io.rulesync.model.cluster;

import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * One endpoint of an EndpointSlice, reduced to what kube-proxy uses: the first address, the
 * conditions (nil already resolved as kube-proxy does: ready and serving default to true,
 * terminating to false), the node, and the topology hints.
 *
 * @param nodeName empty when the slice names no node
 */
public record Endpoint(
        IpAddress address,
        boolean ready,
        boolean serving,
        boolean terminating,
        String nodeName,
        String zone,
        Set<String> zoneHints,
        Set<String> nodeHints) {

    public Endpoint {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(nodeName, "nodeName");
        if (!nodeName.isEmpty()) {
            KubernetesNames.require("nodeName", nodeName, KubernetesNames.checkSubdomain(nodeName));
        }
        Objects.requireNonNull(zone, "zone");
        zoneHints = Set.copyOf(new TreeSet<>(zoneHints));
        nodeHints = Set.copyOf(new TreeSet<>(nodeHints));
    }

    public static Endpoint ready(IpAddress address, String nodeName) {
        return new Endpoint(address, true, true, false, nodeName, "", Set.of(), Set.of());
    }
}
