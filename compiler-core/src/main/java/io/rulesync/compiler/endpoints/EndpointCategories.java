package io.rulesync.compiler.endpoints;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * kube-proxy's CategorizeEndpoints: which endpoints Cluster and Local traffic policy use on this
 * node. "Usable" means Ready, falling back (separately for Cluster and Local) to endpoints that are
 * Serving and Terminating when none is Ready. Cluster endpoints honour topology zone hints when every
 * ready endpoint has hints and one names this node's zone.
 *
 * @param cluster      endpoints for Cluster policy (empty if the port never uses it)
 * @param local        endpoints for Local policy (empty if the port never uses it)
 * @param allReachable the union: every endpoint that gets a KUBE-SEP chain on this node
 * @param hasAny       whether the port has a usable endpoint anywhere in the cluster
 */
public record EndpointCategories(
        List<EndpointInfo> cluster, List<EndpointInfo> local, List<EndpointInfo> allReachable, boolean hasAny) {

    public static EndpointCategories categorize(
            List<EndpointInfo> endpoints, ServicePortInfo svc, String node, String zone) {
        if (endpoints.isEmpty()) {
            return new EndpointCategories(List.of(), List.of(), List.of(), false);
        }
        List<EndpointInfo> cluster = List.of();
        boolean hasAny = false;
        boolean topologyFiltered = false;
        if (svc.usesClusterEndpoints()) {
            topologyFiltered = usesZoneHints(endpoints, zone);
            boolean filtered = topologyFiltered;
            cluster = filter(
                    endpoints, ep -> ep.ready() && (!filtered || ep.zoneHints().contains(zone)));
            if (cluster.isEmpty()) {
                cluster = filter(endpoints, ep -> ep.serving() && ep.terminating());
            }
            hasAny = !cluster.isEmpty();
        }
        if (!svc.usesLocalEndpoints()) {
            return new EndpointCategories(cluster, List.of(), cluster, hasAny);
        }

        boolean localReady = false;
        boolean localServingTerminating = false;
        for (EndpointInfo ep : endpoints) {
            if (ep.ready()) {
                hasAny = true;
                localReady |= ep.isLocalTo(node);
            } else if (ep.serving() && ep.terminating()) {
                hasAny = true;
                localServingTerminating |= ep.isLocalTo(node);
            }
        }
        List<EndpointInfo> local = List.of();
        boolean localUsesTerminating = false;
        if (localReady) {
            local = filter(endpoints, ep -> ep.isLocalTo(node) && ep.ready());
        } else if (localServingTerminating) {
            localUsesTerminating = true;
            local = filter(endpoints, ep -> ep.isLocalTo(node) && ep.serving() && ep.terminating());
        }
        if (!svc.usesClusterEndpoints()) {
            return new EndpointCategories(cluster, local, local, hasAny);
        }
        if (!topologyFiltered && !localUsesTerminating) {
            // Every ready endpoint is a cluster endpoint, so the local ones are already among them.
            return new EndpointCategories(cluster, local, cluster, hasAny);
        }
        TreeMap<String, EndpointInfo> union = new TreeMap<>();
        for (EndpointInfo ep : cluster) {
            union.put(ep.text(), ep);
        }
        for (EndpointInfo ep : local) {
            union.put(ep.text(), ep);
        }
        return new EndpointCategories(cluster, local, List.copyOf(union.values()), hasAny);
    }

    /** Zone hints are honoured only when every ready endpoint has some and one names this zone. */
    private static boolean usesZoneHints(List<EndpointInfo> endpoints, String zone) {
        if (zone.isEmpty()) {
            return false;
        }
        boolean anyReady = false;
        boolean forZone = false;
        for (EndpointInfo ep : endpoints) {
            if (!ep.ready()) {
                continue;
            }
            anyReady = true;
            if (ep.zoneHints().isEmpty()) {
                return false;
            }
            forZone |= ep.zoneHints().contains(zone);
        }
        return anyReady && forZone;
    }

    private static List<EndpointInfo> filter(List<EndpointInfo> endpoints, Predicate<EndpointInfo> keep) {
        List<EndpointInfo> out = new ArrayList<>();
        for (EndpointInfo ep : endpoints) {
            if (keep.test(ep)) {
                out.add(ep);
            }
        }
        return out;
    }
}
