package io.rulesync.model.cluster;

/** {@code externalTrafficPolicy} / {@code internalTrafficPolicy}. */
public enum TrafficPolicy {
    CLUSTER,
    LOCAL;

    public static TrafficPolicy fromApiName(String s) {
        return switch (s) {
            case "Cluster" -> CLUSTER;
            case "Local" -> LOCAL;
            default ->
                throw new IllegalArgumentException(
                        "'" + KubernetesNames.printable(s) + "' is not a traffic policy (expected Cluster or Local)");
        };
    }
}
