package io.rulesync.model.cluster;

import java.util.Comparator;

/**
 * One port of one Service: the unit kube-proxy writes rules for. {@link #toString()} is kube-proxy's
 * {@code ServicePortName.String()}: {@code ns/name:port}, or {@code ns/name} for an unnamed port.
 */
public record ServicePortName(NamespacedName service, String port, Protocol protocol)
        implements Comparable<ServicePortName> {
    private static final Comparator<ServicePortName> ORDER = Comparator.comparing(ServicePortName::service)
            .thenComparing(ServicePortName::port)
            .thenComparing(ServicePortName::protocol);

    public ServicePortName {
        KubernetesNames.require("port name", port, KubernetesNames.checkPortName(port));
        if (protocol == null) {
            throw new IllegalArgumentException("protocol is required");
        }
    }

    @Override
    public String toString() {
        return port.isEmpty() ? service.toString() : service + ":" + port;
    }

    @Override
    public int compareTo(ServicePortName o) {
        return ORDER.compare(this, o);
    }
}
