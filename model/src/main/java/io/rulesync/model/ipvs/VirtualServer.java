package io.rulesync.model.ipvs;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import java.util.List;

/**
 * One IPVS virtual server: an address, port and protocol, its scheduler, persistence for ClientIP
 * session affinity, and its real servers in address order.
 *
 * @param persistenceSeconds 0: no persistence
 */
public record VirtualServer(
        IpAddress address,
        int port,
        Protocol protocol,
        String scheduler,
        int persistenceSeconds,
        List<RealServer> realServers)
        implements Comparable<VirtualServer> {

    public VirtualServer {
        realServers = realServers.stream().sorted().toList();
    }

    /** kube-proxy's identity of a virtual server: {@code 10.96.0.1:443/TCP}. */
    public String key() {
        return address.withPort(port) + "/" + protocol.name();
    }

    /** The service as ipvsadm names it: {@code -t 10.96.0.1:443}, {@code -u ...} or {@code --sctp-service ...}. */
    public String service() {
        String flag = switch (protocol) {
            case TCP -> "-t";
            case UDP -> "-u";
            case SCTP -> "--sctp-service";
        };
        return flag + " " + address.withPort(port);
    }

    /** Its lines of {@code ipvsadm-restore} input: the service, then its real servers (masquerading). */
    public List<String> restoreLines() {
        StringBuilder head =
                new StringBuilder("-A ").append(service()).append(" -s ").append(scheduler);
        if (persistenceSeconds > 0) {
            head.append(" -p ").append(persistenceSeconds);
        }
        if (scheduler.equals("mh")) {
            // kube-proxy sets IP_VS_SVC_F_SCHED2 (FlagSourceHash) with mh: hash on the source port too.
            head.append(" -b mh-port");
        }
        List<String> out = new java.util.ArrayList<>(1 + realServers.size());
        out.add(head.toString());
        for (RealServer r : realServers) {
            out.add("-a " + service() + " -r " + r.text() + " -m -w " + r.weight());
        }
        return out;
    }

    @Override
    public int compareTo(VirtualServer o) {
        int c = address.compareTo(o.address);
        if (c != 0) {
            return c;
        }
        c = protocol.compareTo(o.protocol);
        return c != 0 ? c : Integer.compare(port, o.port);
    }
}
