package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.Agent;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real packets through what the agent programs in IPVS mode, on the real {@code ip_vs} module of the kernel lab's VM,
 * as the iptables mode is proven on this host: a node namespace (where the agent works), three pods behind its bridge
 * serving their names over HTTP (busybox httpd), and two clients on links of their own. Each test compiles a cluster
 * with the real compiler and lets the agent apply it from nothing.
 */
@RequiresKernelVm
class IpvsPacketsVmTest {
    private static final String CLUSTER = "shop";
    private static final String NODE_NS = "pk-node";
    private static final String NODE_IP = "192.168.1.1";
    private static final String WEB_IP = "10.96.0.10";
    private static final List<String> PODS = List.of("10.244.0.10", "10.244.0.11", "10.244.0.12");

    static KernelVm vm;

    @TempDir
    Path dir;

    private final AgentLogs logs = new AgentLogs();
    private final List<NodeAck> acks = new ArrayList<>();

    @BeforeAll
    static void boot() {
        vm = KernelVm.boot();
    }

    @AfterAll
    static void powerOff() {
        if (vm != null) {
            vm.close();
        }
    }

    /** The node, its pods and clients, made again for each test: what one programs is not what the next one sees. */
    @BeforeEach
    void lab() {
        StringBuilder s = new StringBuilder("set -e\n");
        s.append("ip netns add pk-node; ip -n pk-node link set lo up\n")
                .append("ip netns exec pk-node sysctl -qw net.ipv4.ip_forward=1\n")
                .append("ip -n pk-node link add cbr0 type bridge\n")
                .append("ip -n pk-node addr add 10.244.0.1/24 dev cbr0; ip -n pk-node link set cbr0 up\n");
        for (int i = 0; i < PODS.size(); i++) {
            String ns = "pk-pod" + i;
            s.append("ip netns add ")
                    .append(ns)
                    .append('\n')
                    .append("ip -n pk-node link add veth")
                    .append(i)
                    .append(" type veth peer name eth0 netns ")
                    .append(ns)
                    .append('\n')
                    .append("ip -n pk-node link set veth")
                    .append(i)
                    .append(" master cbr0\n")
                    .append("ip -n pk-node link set veth")
                    .append(i)
                    .append(" type bridge_slave hairpin on\n")
                    .append("ip -n pk-node link set veth")
                    .append(i)
                    .append(" up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" link set lo up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" addr add ")
                    .append(PODS.get(i))
                    .append("/24 dev eth0\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" link set eth0 up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" route add default via 10.244.0.1\n")
                    .append("mkdir -p /tmp/www")
                    .append(i)
                    .append("; echo pod")
                    .append(i)
                    .append(" > /tmp/www")
                    .append(i)
                    .append("/index.html\n")
                    .append("ip netns exec ")
                    .append(ns)
                    .append(" httpd -p 8080 -h /tmp/www")
                    .append(i)
                    .append('\n');
        }
        for (int c = 1; c <= 2; c++) {
            String ns = "pk-client" + c;
            s.append("ip netns add ")
                    .append(ns)
                    .append('\n')
                    .append("ip -n pk-node link add c")
                    .append(c)
                    .append(" type veth peer name eth0 netns ")
                    .append(ns)
                    .append('\n')
                    .append("ip -n pk-node addr add 192.168.")
                    .append(c)
                    .append(".1/24 dev c")
                    .append(c)
                    .append('\n')
                    .append("ip -n pk-node link set c")
                    .append(c)
                    .append(" up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" link set lo up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" addr add 192.168.")
                    .append(c)
                    .append(".2/24 dev eth0\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" link set eth0 up\n")
                    .append("ip -n ")
                    .append(ns)
                    .append(" route add default via 192.168.")
                    .append(c)
                    .append(".1\n");
        }
        vm.sh(s.toString());
    }

    @AfterEach
    void tearDown() {
        logs.close();
        // The pods' servers go with their namespaces' processes; every namespace of the lab goes.
        vm.sh("for p in $(pidof httpd); do kill $p; done; for n in $(ip netns list | cut -d' ' -f1 | grep '^pk-'); do"
                + " ip netns delete $n; done");
    }

    /** The cluster, compiled as the compiler compiles it, with {@code scheduler} and {@code objects} besides the node. */
    private ClusterRules cluster(String scheduler, String... objects) {
        ClusterSettings settings = new ClusterSettings(
                List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of(), scheduler);
        List<ClusterEvent> events = new ArrayList<>();
        events.add(new SettingsChanged(CLUSTER, settings, Fixtures.T));
        events.add(Fixtures.upsert(CLUSTER, Fixtures.node("node-a", NODE_IP)));
        Arrays.stream(objects).map(o -> Fixtures.upsert(CLUSTER, o)).forEach(events::add);
        return ClusterHead.empty(CLUSTER).apply(events).next().published();
    }

    /** The agent of node-a in IPVS mode, its commands run in the VM's node namespace; started, it applies version 1. */
    private Agent agent(ClusterRules rules) throws Exception {
        SnapshotSource snapshots = new SnapshotSource() {
            @Override
            public RulesSnapshot latest(String cluster, String node) {
                return at(cluster, node, 1);
            }

            @Override
            public RulesSnapshot at(String cluster, String node, long version) {
                return new RulesSnapshot(CLUSTER, 1, Fixtures.T, rules.forNode(node));
            }
        };
        AgentConfig config = new AgentConfig(
                CLUSTER,
                "node-a",
                "127.0.0.1:9",
                Map.of(),
                Topics.DEFAULT,
                URI.create("http://127.0.0.1:9"),
                null,
                List.of(IpFamily.IPV4),
                null,
                NODE_NS,
                Files.createTempDirectory(dir, "state"),
                Duration.ofSeconds(30),
                50,
                ProxyMode.IPVS,
                WhenUnavailable.REFUSE);
        Agent a = config.agent(snapshots, acks::add, vm.runner().inNetns(NODE_NS), NODE_NS, Clock.systemUTC());
        a.start();
        assertThat(acks.get(acks.size() - 1))
                .as("%s", acks.get(acks.size() - 1))
                .extracting(NodeAck::status, NodeAck::mode)
                .containsExactly(NodeAck.Status.APPLIED, "ipvs");
        return a;
    }

    /** {@code count} requests from {@code ns} to {@code url}, each on a connection of its own: who answered, in order. */
    private static List<String> fetch(String ns, String url, int count) {
        String out = vm.sh("for i in $(seq " + count + "); do ip netns exec " + ns + " timeout 5 wget -q -O- " + url
                + " 2>&1 || echo FAILED; done");
        return out.lines().toList();
    }

    private static String web(int port) {
        return "kind: Service\nmetadata: {name: web, namespace: shop}\n" + "spec: {clusterIP: " + WEB_IP
                + ", ports: [{name: http, port: " + port + "}]}\n";
    }

    @Test
    void roundRobinTakesTheEndpointsInTurn() throws Exception {
        agent(cluster("rr", web(80), Fixtures.slice("web", "node-a", PODS.get(0), PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + WEB_IP + "/", 6);
        assertThat(got).containsOnly("pod0", "pod1");
        for (int i = 1; i < got.size(); i++) {
            assertThat(got.get(i)).as("request %d of %s", i, got).isNotEqualTo(got.get(i - 1));
        }
        assertThat(vm.sh("ip netns exec pk-node ipvsadm -Ln -t " + WEB_IP + ":80"))
                .contains("rr")
                .contains(PODS.get(0) + ":8080")
                .contains(PODS.get(1) + ":8080");
    }

    @Test
    void sourceHashingKeepsEachClientOnOneEndpoint() throws Exception {
        agent(cluster("sh", web(80), Fixtures.slice("web", "node-a", PODS.get(0), PODS.get(1), PODS.get(2))));
        for (String client : List.of("pk-client1", "pk-client2")) {
            List<String> got = fetch(client, "http://" + WEB_IP + "/", 5);
            assertThat(got).as(client).hasSize(5).allMatch(p -> p.startsWith("pod") && p.equals(got.get(0)));
        }
    }

    @Test
    void clientIpAffinityPinsAClientForItsTimeout() throws Exception {
        String sticky = "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                + "spec: {clusterIP: " + WEB_IP + ", sessionAffinity: ClientIP,"
                + " sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}, ports: [{name: http, port: 80}]}\n";
        agent(cluster("rr", sticky, Fixtures.slice("web", "node-a", PODS.get(0), PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + WEB_IP + "/", 6);
        assertThat(got).hasSize(6).allMatch(p -> p.startsWith("pod") && p.equals(got.get(0)));
        assertThat(vm.sh("ip netns exec pk-node ipvsadm -Ln -t " + WEB_IP + ":80"))
                .contains("persistent 60");
    }

    @Test
    void aNodePortReachesTheEndpointsThroughTheNodesAddress() throws Exception {
        String nodePort = "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                + "spec: {type: NodePort, clusterIP: " + WEB_IP
                + ", ports: [{name: http, port: 80, nodePort: 30080}]}\n";
        agent(cluster("rr", nodePort, Fixtures.slice("web", "node-a", PODS.get(0), PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + NODE_IP + ":30080/", 4);
        assertThat(got).containsOnly("pod0", "pod1").contains("pod0", "pod1");
        assertThat(vm.sh("ip netns exec pk-node ipset list KUBE-NODE-PORT-TCP")).contains("30080");
    }

    @Test
    void aServiceWithoutEndpointsRefusesConnections() throws Exception {
        agent(cluster("rr", web(80)));
        List<String> got = fetch("pk-client1", "http://" + WEB_IP + "/", 2);
        assertThat(got).allMatch(l -> l.contains("refused") || l.equals("FAILED"), "refused");
        assertThat(String.join("\n", got)).contains("refused");
    }

    @Test
    void aPodReachesItselfThroughItsServiceMasqueraded() throws Exception {
        agent(cluster("rr", web(80), Fixtures.slice("web", "node-a", PODS.get(0), PODS.get(1))));
        // Every other request comes back to pod0 itself (hairpin): it must be answered, which needs the node to
        // masquerade it, or pod0 would answer its own address directly and the connection would not be the one open.
        List<String> got = fetch("pk-pod0", "http://" + WEB_IP + "/", 4);
        assertThat(got).containsOnly("pod0", "pod1").contains("pod0");
    }
}
