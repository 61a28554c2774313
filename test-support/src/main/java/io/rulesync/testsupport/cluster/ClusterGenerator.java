package io.rulesync.testsupport.cluster;

import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.LoadBalancerIngress;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Random but valid clusters for property tests: every Service feature the compiler handles (types,
 * protocols, traffic policies, affinity, external and load-balancer IPs, source ranges, dual stack)
 * and endpoints in every condition, spread over several EndpointSlices per Service.
 */
public final class ClusterGenerator {
    /** The nodes that run endpoints (a fourth, node-d, runs none). */
    public static final List<String> NODES = List.of("node-a", "node-b", "node-c");

    private final Random r;
    private int nextIp = 1;

    public ClusterGenerator(Random r) {
        this.r = r;
    }

    public record Cluster(List<Service> services, List<EndpointSlice> slices, List<Node> nodes) {
        public ClusterState state() {
            return ClusterState.of(services, slices, nodes);
        }
    }

    public Cluster cluster(int services) {
        List<Service> svcs = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        for (int i = 0; i < services; i++) {
            Service s = service(new NamespacedName("ns" + r.nextInt(3), "svc" + i));
            svcs.add(s);
            slices.addAll(slicesFor(s));
        }
        List<Node> nodes = new ArrayList<>();
        // node-d runs nothing: it exercises the default node class.
        nodes.add(new Node(
                "node-d", "zone-1", List.of(new Node.NodeAddress("InternalIP", IpAddress.parse("203.0.113.9")))));
        for (int i = 0; i < NODES.size(); i++) {
            nodes.add(new Node(
                    NODES.get(i),
                    "zone-" + (i % 2),
                    List.of(
                            new Node.NodeAddress("InternalIP", IpAddress.parse("192.168.0." + (i + 2))),
                            new Node.NodeAddress("InternalIP", IpAddress.parse("fd00:192::" + (i + 2))))));
        }
        return new Cluster(svcs, slices, nodes);
    }

    public Service service(NamespacedName name) {
        ServiceType type =
                pick(ServiceType.CLUSTER_IP, ServiceType.CLUSTER_IP, ServiceType.NODE_PORT, ServiceType.LOAD_BALANCER);
        int nPorts = 1 + r.nextInt(3);
        List<ServicePort> ports = new ArrayList<>();
        Set<Integer> used = new HashSet<>();
        for (int p = 0; p < nPorts; p++) {
            int port = 1 + r.nextInt(1000);
            if (!used.add(port)) {
                continue;
            }
            int nodePort = type != ServiceType.CLUSTER_IP && r.nextInt(4) > 0 ? 30000 + r.nextInt(2768) : 0;
            ports.add(new ServicePort(nPorts == 1 ? "" : "p" + p, pick(Protocol.values()), port, nodePort));
        }
        List<IpAddress> clusterIPs = new ArrayList<>();
        if (r.nextInt(4) > 0) {
            clusterIPs.add(ip(IpFamily.IPV4, "172.30"));
        }
        if (clusterIPs.isEmpty() || r.nextBoolean()) {
            clusterIPs.add(ip(IpFamily.IPV6, "fd00:30"));
        }
        List<IpAddress> externalIPs =
                r.nextInt(4) == 0 ? List.of(ip(IpFamily.IPV4, "198.51"), ip(IpFamily.IPV6, "fd00:99")) : List.of();
        List<LoadBalancerIngress> ingress = new ArrayList<>();
        List<Cidr> ranges = new ArrayList<>();
        if (type == ServiceType.LOAD_BALANCER) {
            ingress.add(new LoadBalancerIngress(ip(IpFamily.IPV4, "5.6"), r.nextInt(5) == 0));
            ingress.add(new LoadBalancerIngress(ip(IpFamily.IPV6, "2001:db8"), false));
            if (r.nextBoolean()) {
                ranges.add(Cidr.parse(pick("203.0.113.0/25", "192.168.0.0/16", "10.0.0.0/8")));
                ranges.add(Cidr.parse("2001:db8::/32"));
            }
        }
        TrafficPolicy etp = r.nextInt(3) == 0 ? TrafficPolicy.LOCAL : TrafficPolicy.CLUSTER;
        TrafficPolicy itp = r.nextInt(4) == 0 ? TrafficPolicy.LOCAL : TrafficPolicy.CLUSTER;
        int affinity = r.nextInt(4) == 0 ? 1 + r.nextInt(86400) : 0;
        int healthCheck = type == ServiceType.LOAD_BALANCER && etp == TrafficPolicy.LOCAL ? 30000 + r.nextInt(2000) : 0;
        String scheduler = r.nextInt(5) == 0 ? "sh" : null; // the IPVS annotation, overriding the cluster's scheduler
        return new Service(
                name,
                type,
                clusterIPs,
                ports,
                externalIPs,
                ingress,
                ranges,
                etp,
                itp,
                affinity,
                healthCheck,
                false,
                scheduler);
    }

    public List<EndpointSlice> slicesFor(Service s) {
        List<EndpointSlice> out = new ArrayList<>();
        for (IpFamily family : IpFamily.values()) {
            int n = r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(12);
            // A quarter of the Services use topology-aware routing: every endpoint carries a zone hint.
            boolean hinted = r.nextInt(4) == 0;
            List<Endpoint> eps = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Endpoint ep = endpoint(family);
                if (hinted) {
                    ep = new Endpoint(
                            ep.address(),
                            ep.ready(),
                            ep.serving(),
                            ep.terminating(),
                            ep.nodeName(),
                            ep.zone(),
                            Set.of("zone-" + r.nextInt(2)),
                            Set.of());
                }
                eps.add(ep);
            }
            List<EndpointPort> ports = new ArrayList<>();
            for (ServicePort p : s.ports()) {
                if (r.nextInt(8) > 0) {
                    ports.add(new EndpointPort(p.name(), p.protocol(), 1024 + r.nextInt(60000)));
                }
            }
            out.addAll(split(s, family, ports, eps));
        }
        return out;
    }

    /** The same endpoints spread over 1-3 slices with random names, in random order. */
    public List<EndpointSlice> split(Service s, IpFamily family, List<EndpointPort> ports, List<Endpoint> endpoints) {
        int parts = 1 + r.nextInt(3);
        List<List<Endpoint>> groups = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            groups.add(new ArrayList<>());
        }
        for (Endpoint ep : endpoints) {
            groups.get(r.nextInt(parts)).add(ep);
        }
        List<EndpointSlice> out = new ArrayList<>();
        for (List<Endpoint> g : groups) {
            Collections.shuffle(g, r);
            String sliceName = s.name().name() + "-" + family.id() + "-" + Integer.toString(r.nextInt(1 << 20), 36);
            out.add(new EndpointSlice(
                    new NamespacedName(s.name().namespace(), sliceName),
                    s.name().name(),
                    family == IpFamily.IPV4 ? AddressType.IPV4 : AddressType.IPV6,
                    ports,
                    g,
                    false));
        }
        return out;
    }

    Endpoint endpoint(IpFamily family) {
        boolean ready = r.nextInt(5) > 0;
        boolean serving = ready || r.nextBoolean();
        boolean terminating = !ready && r.nextBoolean();
        String node = r.nextInt(6) == 0 ? "" : pick(NODES.toArray(new String[0]));
        Set<String> hints = r.nextInt(5) == 0 ? Set.of("zone-" + r.nextInt(2)) : Set.of();
        return new Endpoint(
                ip(family, family == IpFamily.IPV4 ? "10.180" : "fd00:180"),
                ready,
                serving,
                terminating,
                node,
                "",
                hints,
                Set.of());
    }

    /** A fresh address: unique within one generator, so endpoints never collide by accident. */
    private IpAddress ip(IpFamily family, String prefix) {
        int n = nextIp++;
        return family == IpFamily.IPV4
                ? IpAddress.parse(prefix + "." + (n / 250) % 250 + "." + (1 + n % 250))
                : IpAddress.parse(prefix + "::" + Integer.toHexString(n));
    }

    @SafeVarargs
    private <T> T pick(T... options) {
        return options[r.nextInt(options.length)];
    }
}
