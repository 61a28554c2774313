package io.rulesync.compiler.endpoints;

import io.rulesync.model.cluster.IpAddress;
import java.util.Set;

/**
 * One endpoint of one service port, as kube-proxy's endpoints map holds it. {@code text} is
 * {@code ip:port} ({@code [ip]:port} for IPv6): it orders endpoints, names SEP chains and is the DNAT
 * destination. Whether it is local depends on the node the rules are for: {@link #isLocalTo}.
 */
public record EndpointInfo(
        IpAddress ip,
        int port,
        String text,
        boolean ready,
        boolean serving,
        boolean terminating,
        String nodeName,
        Set<String> zoneHints,
        Set<String> nodeHints) {

    /** kube-proxy's "local": the endpoint runs on that node. */
    public boolean isLocalTo(String node) {
        return !node.isEmpty() && node.equals(nodeName);
    }

    public static String joinHostPort(IpAddress ip, int port) {
        return ip.withPort(port);
    }
}
