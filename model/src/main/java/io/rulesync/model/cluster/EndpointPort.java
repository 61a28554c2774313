package io.rulesync.model.cluster;

import java.util.Objects;

/**
 * A port of an EndpointSlice. {@code port} 0 stands for an unset port, which kube-proxy ignores
 * (the API's "all ports" meaning is not implemented by kube-proxy either).
 */
public record EndpointPort(String name, Protocol protocol, int port) {
    public EndpointPort {
        KubernetesNames.require("port name", name, KubernetesNames.checkPortName(name));
        Objects.requireNonNull(protocol, "protocol");
        if (port != 0) {
            Ports.requirePort("port", port);
        }
    }
}
