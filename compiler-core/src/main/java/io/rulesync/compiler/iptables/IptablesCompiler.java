package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.Node;

/**
 * The rule compiler: a pure function from a cluster's state, a node and kube-proxy's settings to
 * that node's iptables rules, as kube-proxy v1.30 in iptables mode writes them. The same inputs give
 * byte-identical output, whatever order the objects arrived in.
 */
public final class IptablesCompiler {
    private IptablesCompiler() {}

    public static NodeRules compile(ClusterState state, String nodeName, ProxySettings settings)
            throws UnknownNodeException {
        Node node = state.node(nodeName).orElseThrow(() -> new UnknownNodeException(nodeName));
        return NodeRules.compile(state, node, settings);
    }
}
