package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.Set;

/**
 * One endpoint of one service port, as kube-proxy's endpoints map holds it. {@code text} is
 * {@code ip:port} ({@code [ip]:port} for IPv6): it orders endpoints, names SEP chains and is the DNAT
 * destination.
 */
record EndpointInfo(
        IpAddress ip,
        int port,
        String text,
        boolean ready,
        boolean serving,
        boolean terminating,
        boolean local,
        Set<String> zoneHints,
        Set<String> nodeHints) {

    static String joinHostPort(IpAddress ip, int port) {
        return ip.family() == IpFamily.IPV6 ? "[" + ip + "]:" + port : ip + ":" + port;
    }
}
