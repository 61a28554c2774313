package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpAddress;

/**
 * A real server as the kernel holds it, with its connection counts: graceful termination waits for
 * them to reach 0.
 *
 * @param forward ipvsadm's name of the forwarding method: {@code Masq}, {@code Route}, {@code Tunnel}, {@code Local}
 */
public record KernelRealServer(
        IpAddress address, int port, String forward, int weight, int activeConnections, int inactiveConnections)
        implements Comparable<KernelRealServer> {

    /** What kube-proxy's real servers use (NAT). */
    public static final String MASQ = "Masq";

    /**
     * Whether it forwards as kube-proxy's real servers do. Kernels before 3.10 list a real server at a
     * local address as {@code Local} whatever method it was added with, and an edit cannot change
     * that, so it counts as masquerading.
     */
    public boolean masquerades() {
        return forward.equals(MASQ) || forward.equals("Local");
    }

    public int connections() {
        return activeConnections + inactiveConnections;
    }

    public String text() {
        return address.withPort(port);
    }

    @Override
    public int compareTo(KernelRealServer o) {
        int c = address.compareTo(o.address);
        return c != 0 ? c : Integer.compare(port, o.port);
    }
}
