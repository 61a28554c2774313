package io.rulesync.model.cluster;

import java.util.List;
import java.util.Objects;

/**
 * An EndpointSlice, joined to its Service by the {@code kubernetes.io/service-name} label only
 * (like kube-proxy, which ignores {@code managed-by}: selectorless Services work the same way).
 *
 * @param ignored labelled {@code service.kubernetes.io/service-proxy-name} or
 *                {@code service.kubernetes.io/headless}, or of address type FQDN: kube-proxy skips it
 */
public record EndpointSlice(
        NamespacedName name,
        String serviceName,
        AddressType addressType,
        List<EndpointPort> ports,
        List<Endpoint> endpoints,
        boolean ignored)
        implements ClusterObject {

    public EndpointSlice {
        Objects.requireNonNull(name, "name");
        KubernetesNames.require(
                "label kubernetes.io/service-name", serviceName, KubernetesNames.checkServiceName(serviceName));
        Objects.requireNonNull(addressType, "addressType");
        ports = List.copyOf(ports);
        endpoints = List.copyOf(endpoints);
    }

    public NamespacedName service() {
        return new NamespacedName(name.namespace(), serviceName);
    }

    @Override
    public String kind() {
        return "EndpointSlice";
    }

    @Override
    public String key() {
        return name.toString();
    }
}
