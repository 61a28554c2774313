package io.rulesync.model.cluster;

/**
 * One port of one Service: the unit kube-proxy writes rules for. {@link #toString()} is kube-proxy's
 * {@code ServicePortName.String()}: {@code ns/name:port}, or {@code ns/name} for an unnamed port.
 */
public record ServicePortName(NamespacedName service, String port, Protocol protocol)
        implements Comparable<ServicePortName> {
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
        int c = service.compareTo(o.service);
        if (c != 0) {
            return c;
        }
        c = port.compareTo(o.port);
        return c != 0 ? c : protocol.compareTo(o.protocol);
    }
}
