package io.rulesync.model.cluster;

/** The three kinds of Kubernetes object that rule compilation reads. */
public sealed interface ClusterObject permits Service, EndpointSlice, Node {
    /** {@code Service}, {@code EndpointSlice} or {@code Node}. */
    String kind();

    /** {@code namespace/name}, or the name alone for a Node. */
    String key();
}
