package io.rulesync.model.cluster;

/** {@code spec.type} of a Service. */
public enum ServiceType {
    CLUSTER_IP("ClusterIP"),
    NODE_PORT("NodePort"),
    LOAD_BALANCER("LoadBalancer"),
    EXTERNAL_NAME("ExternalName");

    private final String apiName;

    ServiceType(String apiName) {
        this.apiName = apiName;
    }

    public String apiName() {
        return apiName;
    }

    public static ServiceType fromApiName(String s) {
        for (ServiceType t : values()) {
            if (t.apiName.equals(s)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown Service type '" + KubernetesNames.printable(s)
                + "' (expected ClusterIP, NodePort, LoadBalancer or ExternalName)");
    }
}
