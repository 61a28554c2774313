package io.rulesync.testsupport.cluster;

import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import java.util.ArrayList;
import java.util.List;

/**
 * A deterministic cluster of the shape kube-proxy's scale measurements use: Services
 * with N endpoints each (spread over 3 nodes), every 10th a NodePort, every 7th with ClientIP
 * affinity, every 13th without endpoints.
 */
public final class SyntheticCluster {
    public static final String NODE = "node-0";

    private SyntheticCluster() {}

    public static ClusterState build(int services, int endpointsPerService) {
        List<Service> svcs = new ArrayList<>(services);
        List<EndpointSlice> slices = new ArrayList<>(services);
        for (int i = 0; i < services; i++) {
            svcs.add(service(i));
            if (i % 13 != 12) {
                slices.add(slice(i, endpointsPerService, 0));
            }
        }
        List<Node> nodes = List.of(node(0), node(1), node(2));
        return ClusterState.of(svcs, slices, nodes);
    }

    public static NamespacedName serviceName(int i) {
        return new NamespacedName("ns" + (i % 50), "svc" + i);
    }

    public static Service service(int i) {
        boolean nodePort = i % 10 == 9;
        return new Service(
                serviceName(i),
                nodePort ? ServiceType.NODE_PORT : ServiceType.CLUSTER_IP,
                List.of(IpAddress.parse("172.30." + (i / 250) + "." + (1 + i % 250))),
                List.of(new ServicePort("http", Protocol.TCP, 80, nodePort ? 30000 + i % 2768 : 0)),
                List.of(),
                List.of(),
                List.of(),
                TrafficPolicy.CLUSTER,
                TrafficPolicy.CLUSTER,
                i % 7 == 6 ? 10800 : 0,
                0,
                false);
    }

    /** The slice of Service i; {@code generation} shifts one endpoint's address, to model a change. */
    public static EndpointSlice slice(int i, int endpoints, int generation) {
        List<Endpoint> eps = new ArrayList<>(endpoints);
        for (int e = 0; e < endpoints; e++) {
            // long: a long-running stream (the fault harnesses) moves one Service's endpoint thousands of times.
            long n = (long) i * endpoints + e + (e == 0 ? generation * 1_000_000L : 0);
            IpAddress ip = IpAddress.parse("10." + (64 + (n >> 16) % 128) + "." + ((n >> 8) & 255) + "." + (n & 255));
            eps.add(Endpoint.ready(ip, "node-" + (e % 3)));
        }
        return new EndpointSlice(
                new NamespacedName("ns" + (i % 50), "svc" + i + "-abcde"),
                "svc" + i,
                AddressType.IPV4,
                List.of(new EndpointPort("http", Protocol.TCP, 8080)),
                eps,
                false);
    }

    /** Node n of the synthetic cluster; {@link #build} makes node-0 to node-2. */
    public static Node node(int n) {
        return new Node(
                "node-" + n, "", List.of(new Node.NodeAddress("InternalIP", IpAddress.parse("192.168.0." + (n + 2)))));
    }
}
