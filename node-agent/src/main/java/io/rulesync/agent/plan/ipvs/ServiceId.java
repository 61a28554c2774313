package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.VirtualServer;
import java.util.List;

/**
 * What identifies a virtual server to IPVS: address, port and protocol. Ordered as
 * {@link VirtualServer} orders (address, protocol, port), so plans come out in the same order as
 * the compiler's {@code ipvsadm-restore} text.
 */
public record ServiceId(IpAddress address, int port, Protocol protocol) implements Comparable<ServiceId> {

    public static ServiceId of(VirtualServer vs) {
        return new ServiceId(vs.address(), vs.port(), vs.protocol());
    }

    /** kube-proxy's identity of a virtual server: {@code 10.96.0.1:443/TCP}. */
    public String key() {
        return shape().key();
    }

    /** As ipvsadm names it: {@code -t 10.96.0.1:443}, {@code -u ...}, {@code --sctp-service ...}. */
    public String service() {
        return shape().service();
    }

    /** The model's renderings are the convention; a bare virtual server reuses them. */
    private VirtualServer shape() {
        return new VirtualServer(address, port, protocol, "", 0, List.of());
    }

    @Override
    public int compareTo(ServiceId o) {
        int c = address.compareTo(o.address);
        if (c != 0) {
            return c;
        }
        c = protocol.compareTo(o.protocol);
        return c != 0 ? c : Integer.compare(port, o.port);
    }

    @Override
    public String toString() {
        return key();
    }
}
