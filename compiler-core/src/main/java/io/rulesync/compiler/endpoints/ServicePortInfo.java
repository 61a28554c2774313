package io.rulesync.compiler.endpoints;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.LoadBalancerIngress;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServicePortName;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One service port seen by the proxier of one IP family (kube-proxy's BaseServicePortInfo): addresses
 * of other families are filtered out, load balancers in {@code ipMode: Proxy} are dropped (and so are
 * load-balancer IPs in a special range, unlike kube-proxy), and the health-check node port is kept
 * only where kube-proxy would serve it.
 *
 * @param affinityTimeoutSeconds 0 when session affinity is None
 */
public record ServicePortInfo(
        ServicePortName name,
        IpAddress clusterIP,
        int port,
        int nodePort,
        List<IpAddress> externalIPs,
        List<IpAddress> loadBalancerVIPs,
        List<Cidr> loadBalancerSourceRanges,
        int healthCheckNodePort,
        boolean externalPolicyLocal,
        boolean internalPolicyLocal,
        int affinityTimeoutSeconds) {

    /** The ports of a Service for one family; empty when kube-proxy would skip the Service. */
    public static List<ServicePortInfo> of(Service svc, IpFamily family) {
        if (!svc.proxied()) {
            return List.of();
        }
        Optional<IpAddress> clusterIP = svc.clusterIP(family);
        if (clusterIP.isEmpty()) {
            return List.of();
        }
        List<IpAddress> externalIPs =
                svc.externalIPs().stream().filter(ip -> ip.family() == family).toList();
        List<IpAddress> vips = new ArrayList<>();
        for (LoadBalancerIngress ing : svc.loadBalancerIngress()) {
            // Unlike kube-proxy, no rule for a special address (loopback, link-local...): it would capture
            // traffic meant for the node itself. The API server accepts one here; Admission reports it.
            if (!ing.proxyMode()
                    && ing.ip().family() == family
                    && ing.ip().specialRange().isEmpty()) {
                vips.add(ing.ip());
            }
        }
        List<Cidr> ranges = svc.loadBalancerSourceRanges().stream()
                .filter(c -> c.family() == family)
                .toList();
        int healthCheck = svc.needsHealthCheck() ? svc.healthCheckNodePort() : 0;
        List<ServicePortInfo> out = new ArrayList<>(svc.ports().size());
        for (ServicePort p : svc.ports()) {
            out.add(new ServicePortInfo(
                    svc.portName(p),
                    clusterIP.get(),
                    p.port(),
                    p.nodePort(),
                    externalIPs,
                    List.copyOf(vips),
                    ranges,
                    healthCheck,
                    svc.externalPolicyLocal(),
                    svc.internalPolicyLocal(),
                    svc.affinityTimeoutSeconds()));
        }
        return out;
    }

    public boolean externallyAccessible() {
        return nodePort != 0 || !loadBalancerVIPs.isEmpty() || !externalIPs.isEmpty();
    }

    /** Cluster endpoints are needed for Cluster internal policy, and for any external traffic (short-circuit). */
    public boolean usesClusterEndpoints() {
        return !internalPolicyLocal || externallyAccessible();
    }

    public boolean usesLocalEndpoints() {
        return internalPolicyLocal || (externalPolicyLocal && externallyAccessible());
    }

    public boolean sessionAffinity() {
        return affinityTimeoutSeconds > 0;
    }
}
