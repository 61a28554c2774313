package io.rulesync.compiler.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A 5,000-node cluster costs little more than a 5-node one: the compiled fragments (the compile
 * work and what is stored) depend on the distinct node classes, not on the number of nodes.
 */
class NodeScalingTest {

    private static ClusterState cluster(int nodes) {
        List<Service> services = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            boolean local = i % 10 == 0; // externalTrafficPolicy: Local, node-dependent by design
            NamespacedName name = new NamespacedName("ns", "svc" + i);
            services.add(new Service(
                    name,
                    local ? ServiceType.NODE_PORT : ServiceType.CLUSTER_IP,
                    List.of(IpAddress.parse("172.30.0." + (i + 1))),
                    List.of(new ServicePort("http", Protocol.TCP, 80, local ? 30000 + i : 0)),
                    List.of(),
                    List.of(),
                    List.of(),
                    local ? TrafficPolicy.LOCAL : TrafficPolicy.CLUSTER,
                    TrafficPolicy.CLUSTER,
                    0,
                    0,
                    false));
            List<Endpoint> eps = new ArrayList<>();
            for (int e = 0; e < 5; e++) {
                // Pods run on the first five nodes, whatever the cluster's size.
                eps.add(Endpoint.ready(IpAddress.parse("10.64." + i + "." + (e + 1)), "node-" + e));
            }
            slices.add(new EndpointSlice(
                    new NamespacedName("ns", "svc" + i + "-1"),
                    "svc" + i,
                    AddressType.IPV4,
                    List.of(new EndpointPort("http", Protocol.TCP, 8080)),
                    eps,
                    false));
        }
        List<Node> ns = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            ns.add(new Node(
                    "node-" + n,
                    "zone-" + (n % 3),
                    List.of(new Node.NodeAddress(
                            "InternalIP", IpAddress.parse("192.168." + (n / 250) + "." + (1 + n % 250))))));
        }
        return ClusterState.of(services, slices, ns);
    }

    private static String render(ClusterRules rules, String node) {
        return rules.ruleSet(node, IpFamily.IPV4).orElseThrow().render();
    }

    @Test
    void fragmentsGrowWithNodeClassesNotWithNodes() {
        ClusterRules small =
                ClusterCompiler.compile(cluster(5), ClusterSettings.DEFAULT).rules();
        ClusterRules large =
                ClusterCompiler.compile(cluster(5000), ClusterSettings.DEFAULT).rules();
        // 1 fixed + 180 Cluster-policy ports + 20 Local ports x (5 hosting nodes + 1 default).
        assertThat(small.fragments()).hasSize(1 + 180 + 20 * 6);
        assertThat(large.fragments()).hasSameSizeAs(small.fragments());
        assertThat(large.fragments().keySet()).isEqualTo(small.fragments().keySet());
        assertThat(large.nodes()).hasSize(5000);
        // Nodes that run nothing share their rules; a node that runs pods has the same rules in both clusters.
        assertThat(render(large, "node-4999")).isEqualTo(render(large, "node-100"));
        assertThat(render(large, "node-4")).isEqualTo(render(small, "node-4")).isNotEqualTo(render(large, "node-100"));
    }
}
