package io.rulesync.model.cluster;

/** One entry of {@code spec.ports}: what kube-proxy needs of it. {@code nodePort} 0 means none. */
public record ServicePort(String name, Protocol protocol, int port, int nodePort) {
    public ServicePort {
        KubernetesNames.require("port name", name, KubernetesNames.checkPortName(name));
        if (protocol == null) {
            throw new IllegalArgumentException("protocol is required");
        }
        Ports.requirePort("port", port);
        if (nodePort != 0) {
            Ports.requirePort("nodePort", nodePort);
        }
    }
}
