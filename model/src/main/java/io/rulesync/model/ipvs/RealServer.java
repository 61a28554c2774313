package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.IpAddress;

/** One destination of a virtual server: an endpoint, with kube-proxy's weight (always 1; 0 while draining). */
public record RealServer(IpAddress address, int port, int weight) implements Comparable<RealServer> {
    public String text() {
        return address.withPort(port);
    }

    @Override
    public int compareTo(RealServer o) {
        int c = address.compareTo(o.address);
        return c != 0 ? c : Integer.compare(port, o.port);
    }
}
