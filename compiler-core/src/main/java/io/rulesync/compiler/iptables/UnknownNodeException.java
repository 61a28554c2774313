package io.rulesync.compiler.iptables;

/** Rules were asked for a node that the cluster state does not hold. */
public class UnknownNodeException extends Exception {
    private final String node;

    public UnknownNodeException(String node) {
        super("node '" + node + "' is not in the cluster state (no Node object with that name)");
        this.node = node;
    }

    public String node() {
        return node;
    }
}
