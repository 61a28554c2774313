package io.rulesync.model.cluster;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A Service as the rule compiler sees it: already defaulted the way the API server would, and
 * validated, so every value in it is safe to render.
 *
 * @param clusterIPs               one address per family; empty for headless ({@code None}) and ExternalName
 * @param affinityTimeoutSeconds   ClientIP session affinity timeout; 0 when sessionAffinity is None
 * @param healthCheckNodePort      0 when none
 * @param ignored                  labelled {@code service.kubernetes.io/service-proxy-name} or
 *                                 {@code service.kubernetes.io/headless}: kube-proxy does not watch it
 * @param ipvsScheduler            IPVS mode's scheduler for this Service (annotation {@value #IPVS_SCHEDULER_ANNOTATION});
 *                                 null: the cluster's
 */
public record Service(
        NamespacedName name,
        ServiceType type,
        List<IpAddress> clusterIPs,
        List<ServicePort> ports,
        List<IpAddress> externalIPs,
        List<LoadBalancerIngress> loadBalancerIngress,
        List<Cidr> loadBalancerSourceRanges,
        TrafficPolicy externalTrafficPolicy,
        TrafficPolicy internalTrafficPolicy,
        int affinityTimeoutSeconds,
        int healthCheckNodePort,
        boolean ignored,
        String ipvsScheduler)
        implements ClusterObject {

    /**
     * Picks an IPVS scheduler for one Service. kube-proxy has only the node-wide
     * {@code --ipvs-scheduler}; rulesync lets a Service choose, and checks the choice like any field.
     */
    public static final String IPVS_SCHEDULER_ANNOTATION = "rulesync.io/ipvs-scheduler";
    /** The schedulers of the kernel's IPVS that kube-proxy passes through. */
    public static final List<String> IPVS_SCHEDULERS =
            List.of("rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", "mh");

    /** A Service that leaves the IPVS scheduler to the cluster. */
    public Service(
            NamespacedName name,
            ServiceType type,
            List<IpAddress> clusterIPs,
            List<ServicePort> ports,
            List<IpAddress> externalIPs,
            List<LoadBalancerIngress> loadBalancerIngress,
            List<Cidr> loadBalancerSourceRanges,
            TrafficPolicy externalTrafficPolicy,
            TrafficPolicy internalTrafficPolicy,
            int affinityTimeoutSeconds,
            int healthCheckNodePort,
            boolean ignored) {
        this(
                name,
                type,
                clusterIPs,
                ports,
                externalIPs,
                loadBalancerIngress,
                loadBalancerSourceRanges,
                externalTrafficPolicy,
                internalTrafficPolicy,
                affinityTimeoutSeconds,
                healthCheckNodePort,
                ignored,
                null);
    }

    /** Why {@code scheduler} is no IPVS scheduler, or null. */
    public static String checkIpvsScheduler(String scheduler) {
        return IPVS_SCHEDULERS.contains(scheduler)
                ? null
                : "'" + KubernetesNames.printable(scheduler) + "' is not an IPVS scheduler ("
                        + String.join(", ", IPVS_SCHEDULERS) + ")";
    }

    public Service {
        Objects.requireNonNull(name, "name");
        KubernetesNames.require("name", name.name(), KubernetesNames.checkServiceName(name.name()));
        Objects.requireNonNull(type, "type");
        clusterIPs = List.copyOf(clusterIPs);
        ports = List.copyOf(ports);
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIngress = List.copyOf(loadBalancerIngress);
        loadBalancerSourceRanges = List.copyOf(loadBalancerSourceRanges);
        Objects.requireNonNull(externalTrafficPolicy, "externalTrafficPolicy");
        Objects.requireNonNull(internalTrafficPolicy, "internalTrafficPolicy");
        if (clusterIPs.size() > 2
                || (clusterIPs.size() == 2
                        && clusterIPs.get(0).family() == clusterIPs.get(1).family())) {
            throw new IllegalArgumentException("clusterIPs: at most one address per IP family");
        }
        Set<String> portNames = new HashSet<>();
        for (ServicePort p : ports) {
            if (!portNames.add(p.name())) {
                throw new IllegalArgumentException("ports: duplicate port name '" + p.name() + "'");
            }
        }
        if (affinityTimeoutSeconds < 0 || affinityTimeoutSeconds > Ports.MAX_AFFINITY_TIMEOUT_SECONDS) {
            throw new IllegalArgumentException("sessionAffinityConfig.clientIP.timeoutSeconds: "
                    + affinityTimeoutSeconds + " is out of range (1-" + Ports.MAX_AFFINITY_TIMEOUT_SECONDS + ")");
        }
        if (healthCheckNodePort != 0) {
            Ports.requirePort("healthCheckNodePort", healthCheckNodePort);
        }
        if (ipvsScheduler != null && checkIpvsScheduler(ipvsScheduler) != null) {
            throw new IllegalArgumentException(
                    "metadata.annotations[" + IPVS_SCHEDULER_ANNOTATION + "]: " + checkIpvsScheduler(ipvsScheduler));
        }
    }

    /** The ClusterIP of that family, if the Service has one (kube-proxy's GetClusterIPByFamily). */
    public Optional<IpAddress> clusterIP(IpFamily family) {
        return clusterIPs.stream().filter(ip -> ip.family() == family).findFirst();
    }

    /** kube-proxy's ShouldSkipService plus its informer label filter. */
    public boolean proxied() {
        return !ignored && type != ServiceType.EXTERNAL_NAME && !clusterIPs.isEmpty();
    }

    /** apiservice.ExternalPolicyLocal: only NodePort and LoadBalancer Services have an external policy. */
    public boolean externalPolicyLocal() {
        return (type == ServiceType.NODE_PORT || type == ServiceType.LOAD_BALANCER)
                && externalTrafficPolicy == TrafficPolicy.LOCAL;
    }

    public boolean internalPolicyLocal() {
        return internalTrafficPolicy == TrafficPolicy.LOCAL;
    }

    /** apiservice.NeedsHealthCheck: the health-check node port only matters for Local LoadBalancers. */
    public boolean needsHealthCheck() {
        return type == ServiceType.LOAD_BALANCER && externalPolicyLocal();
    }

    public ServicePortName portName(ServicePort port) {
        return new ServicePortName(name, port.name(), port.protocol());
    }

    @Override
    public String kind() {
        return "Service";
    }

    @Override
    public String key() {
        return name.toString();
    }
}
