package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.netns.NetnsLab;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * The whole system with real parts: a Kubernetes API (fabric8's mock server in CRUD mode: real
 * HTTP lists and watches) → watcher → Kafka (KRaft broker) → compiler → PostgreSQL → api and
 * deltas → two node agents, each programming the kernel of its own network namespace with
 * iptables-restore → acks → PostgreSQL. After every change, real TCP connections to the ClusterIP
 * and the NodePort of each node reach exactly the Service's current endpoints.
 *
 * <p>Each node namespace has its own pods on the same addresses (10.244.0.10-12), standing for the
 * cluster's pods as seen from that node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEnd
@RequiresNetns
@RequiresPostgres
@RequiresKafka
class EndToEndTest {
    private static final String CLUSTER = "e2e";
    private static final String NS = "shop";
    private static final String CLUSTER_IP = "10.96.0.10";
    private static final int NODE_PORT = 30080;
    private static final String ADMIN_RULE = "-A INPUT -s 198.51.100.7/32 -j ADMIN-AUDIT";
    private static final String ADMIN_NAT_RULE =
            "-A PREROUTING -d 203.0.113.80/32 -p tcp -m tcp --dport 8443 -j DNAT --to-destination 10.244.0.10:8080";

    @TempDir
    static Path dir;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
    private final Map<String, NetnsLab> labs = new LinkedHashMap<>();
    private final Map<String, AgentLoop> agents = new HashMap<>();
    /** Opened once the api has started: Spring Boot's logging set-up resets logback and would drop it. */
    private AgentLogs agentLog;

    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private KubernetesMockServer kube;
    private KubernetesClient client;
    private TestDatabase db;
    private CompilerStores store;
    private NodeStatusStore status;
    private String apiUrl;
    /** Each node's own token: only it may ack for it. */
    private static final AgentTokens AGENTS = AgentTokens.random();

    private static final ApiTokens.Issued VIEWER_TOKEN = ApiTokens.issue("test", Role.VIEWER);

    @BeforeAll
    void startEverything() throws Exception {
        for (String node : List.of("node-a", "node-b")) {
            NetnsLab lab = new NetnsLab(3);
            labs.put(node, lab);
            for (int pod = 0; pod < 3; pod++) {
                lab.serve(pod, "tcp", 8080, "pod" + pod);
            }
            // An administrator's rules in the same tables: every apply must leave them alone.
            lab.exec(lab.nodeNs(), "iptables", "-N", "ADMIN-AUDIT").orThrow();
            lab.exec(lab.nodeNs(), "iptables", "-A", "ADMIN-AUDIT", "-j", "RETURN")
                    .orThrow();
            lab.exec(lab.nodeNs(), "iptables", "-A", "INPUT", "-s", "198.51.100.7", "-j", "ADMIN-AUDIT")
                    .orThrow();
            lab.exec(
                            lab.nodeNs(),
                            "iptables",
                            "-t",
                            "nat",
                            "-A",
                            "PREROUTING",
                            "-d",
                            "203.0.113.80",
                            "-p",
                            "tcp",
                            "--dport",
                            "8443",
                            "-j",
                            "DNAT",
                            "--to-destination",
                            "10.244.0.10:8080")
                    .orThrow();
        }

        kube = new KubernetesMockServer(
                new Context(Serialization.jsonMapper()),
                new MockWebServer(),
                new HashMap<>(),
                new KubernetesCrudDispatcher(),
                false);
        kube.init();
        client = kube.createClient();
        client.nodes().resource(node("node-a", labs.get("node-a").nodeIPv4())).create();
        client.nodes().resource(node("node-b", "192.168.51.1")).create();
        apply(service(80));
        apply(slice(0));

        db = TestDatabase.create();
        ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run);
        closeLast.add(compiler::close);
        store = compiler.getBean(CompilerStores.class);
        status = compiler.getBean(NodeStatusStore.class);

        List<String> tokenLines = new ArrayList<>(AGENTS.lines(CLUSTER, labs.keySet()));
        tokenLines.add(VIEWER_TOKEN.line());
        ApiCommand apiCommand = new ApiCommand().withTokens(tokenLines);
        new CommandLine(apiCommand)
                .parseArgs(
                        "--port=0",
                        "--stream-port=0",
                        "--address=127.0.0.1",
                        "--db-url=" + db.url(),
                        "--db-user=" + db.user());
        apiCommand.withDatabasePassword(db.password());
        ConfigurableApplicationContext api = apiCommand.start();
        closeLast.add(api::close);
        apiUrl = "http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port");

        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: mock, cluster: {server: "http://localhost:%d"}}]
                users: [{name: test, user: {token: secret}}]
                contexts: [{name: mock, context: {cluster: mock, user: test}}]
                current-context: mock
                """.formatted(kube.getPort()));
        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of());
        Properties producer = new Properties();
        producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        Watcher watcher = Watcher.start(
                FleetConfig.of(new ClusterSpec(
                        CLUSTER, new ClusterSource.Kubeconfig(Optional.of(kubeconfig), Optional.empty()), settings)),
                producer,
                topics.events());
        closeLast.add(watcher);
        assertThat(watcher.awaitSynced(Duration.ofSeconds(60))).isTrue();

        await("the first version", () -> store.history().head(CLUSTER) >= 1);
        agentLog = new AgentLogs();
        for (String node : labs.keySet()) {
            startAgent(node);
        }
    }

    @AfterAll
    void stopEverything() {
        agents.values().forEach(AgentLoop::close);
        if (agentLog != null) {
            agentLog.close();
        }
        for (int i = closeLast.size() - 1; i >= 0; i--) {
            try {
                closeLast.get(i).close();
            } catch (Exception e) {
                System.out.println("while stopping: " + e);
            }
        }
        if (client != null) {
            client.close();
        }
        if (kube != null) {
            kube.destroy();
        }
        if (db != null) {
            db.close();
        }
        labs.values().forEach(NetnsLab::close);
    }

    private void startAgent(String node) throws InterruptedException {
        AgentConfig config = new AgentConfig(
                CLUSTER,
                node,
                TestInfrastructure.kafkaBootstrapServers(),
                Map.of(),
                topics,
                URI.create(apiUrl),
                AGENTS.token(CLUSTER, node),
                List.of(IpFamily.IPV4),
                null,
                labs.get(node).nodeNs(),
                dir.resolve("state"),
                Duration.ofSeconds(2),
                50);
        AgentLoop loop = config.loop().start();
        loop.awaitStarted();
        agents.put(node, loop);
    }

    @Test
    void changesReachEveryNodesKernelAndAreAcknowledged() throws Exception {
        // The initial lists of Services, slices and Nodes may arrive as several versions.
        await("the initial state applied everywhere", () -> {
            long head = store.history().head(CLUSTER);
            return head >= 1
                    && store.history().nodes(CLUSTER, head).size() == 2
                    && !store.history()
                            .rules(CLUSTER, head)
                            .unit(IpFamily.IPV4, Unit.parse("shop/web:http/TCP"))
                            .isEmpty()
                    && labs.keySet().stream().allMatch(n -> {
                        NodeStatus s = nodeStatusOrNull(n);
                        return s != null && s.running() == head;
                    });
        });
        long v = converged(Set.of("node-a", "node-b"), store.history().head(CLUSTER));
        assertReaches(80, Set.of("pod0"));

        apply(slice(0, 1, 2));
        v = converged(Set.of("node-a", "node-b"), v + 1);
        assertReaches(80, Set.of("pod0", "pod1", "pod2"));

        apply(slice(1, 2));
        v = converged(Set.of("node-a", "node-b"), v + 1);
        assertReaches(80, Set.of("pod1", "pod2"));

        // The Service port moves: 81 answers, 80 no longer does.
        apply(service(81));
        v = converged(Set.of("node-a", "node-b"), v + 1);
        assertReaches(81, Set.of("pod1", "pod2"));
        assertNothingAnswers(80);

        // An agent dies; the cluster moves on without it; restarted, it catches up from the version its kernel holds.
        agents.remove("node-b").close();
        apply(slice(0, 1, 2));
        v = converged(Set.of("node-a"), v + 1);
        assertThat(nodeStatus("node-b").running()).isEqualTo(v - 1);
        startAgent("node-b");
        v = converged(Set.of("node-a", "node-b"), v);
        String resumed = "node-b: kernel holds version " + (v - 1) + " from an earlier run";
        assertThat(agentLog.linesOf("node-b")).anyMatch(l -> l.startsWith(resumed));
        assertReaches(81, Set.of("pod0", "pod1", "pod2"));

        client.services().inNamespace(NS).withName("web").delete();
        v = converged(Set.of("node-a", "node-b"), v + 1);
        assertNothingAnswers(81);
        for (NetnsLab lab : labs.values()) {
            assertThat(lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-S", "KUBE-SERVICES")
                            .orThrow()
                            .lines())
                    .noneMatch(l -> l.contains(CLUSTER_IP));
        }
        assertThat(agents.values())
                .allSatisfy(a -> assertThat(a.agent().failures()).isZero());
        // The api answers the same from the recorded acks: both nodes run the newest version.
        String nodes = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(
                                        URI.create(apiUrl + "/api/v1/clusters/" + CLUSTER + "/nodes"))
                                .header("Authorization", "Bearer " + VIEWER_TOKEN.token())
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(nodes)
                .contains("\"version\":" + v)
                .containsPattern("\"node\":\"node-a\",\"state\":\"converged\"")
                .containsPattern("\"node\":\"node-b\",\"state\":\"converged\"");
    }

    // ------------------------------------------------------------------------------------------------ checks

    /** Waits until the cluster's head is at least {@code atLeast} and every given node has acknowledged it. */
    private long converged(Set<String> nodes, long atLeast) throws InterruptedException {
        await("version " + atLeast + " applied on " + nodes, () -> {
            long head = store.history().head(CLUSTER);
            return head >= atLeast
                    && nodes.stream().allMatch(n -> {
                        NodeStatus s = nodeStatusOrNull(n);
                        return s != null && s.running() == head && s.lastStatus() == NodeAck.Status.APPLIED;
                    });
        });
        long head = store.history().head(CLUSTER);
        assertThat(head).as("one change, one version").isEqualTo(atLeast);
        for (NetnsLab lab : labs.values()) {
            assertThat(lab.exec(lab.nodeNs(), "iptables", "-S", "INPUT")
                            .orThrow()
                            .lines())
                    .contains(ADMIN_RULE);
            assertThat(lab.exec(lab.nodeNs(), "iptables", "-S", "ADMIN-AUDIT")
                            .orThrow()
                            .lines())
                    .contains("-A ADMIN-AUDIT -j RETURN");
            assertThat(lab.exec(lab.nodeNs(), "iptables", "-t", "nat", "-S", "PREROUTING")
                            .orThrow()
                            .lines())
                    .contains(ADMIN_NAT_RULE);
        }
        return head;
    }

    private NodeStatus nodeStatus(String node) {
        NodeStatus s = nodeStatusOrNull(node);
        assertThat(s).as("status of " + node).isNotNull();
        return s;
    }

    private NodeStatus nodeStatusOrNull(String node) {
        return status.nodeStatus(CLUSTER).stream()
                .filter(s -> s.node().equals(node))
                .findFirst()
                .orElse(null);
    }

    /** From outside the node to the ClusterIP, from the node itself to the ClusterIP, from outside to the NodePort. */
    private void assertReaches(int port, Set<String> pods) {
        for (Map.Entry<String, NetnsLab> e : labs.entrySet()) {
            NetnsLab lab = e.getValue();
            assertThat(ids(lab.probe(lab.clientNs(), "tcp", CLUSTER_IP, port, 40, 3000)))
                    .as("%s ClusterIP from outside", e.getKey())
                    .isEqualTo(pods);
            assertThat(ids(lab.probe(lab.nodeNs(), "tcp", CLUSTER_IP, port, 40, 3000)))
                    .as("%s ClusterIP from the node", e.getKey())
                    .isEqualTo(pods);
            assertThat(ids(lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), NODE_PORT, 40, 3000)))
                    .as("%s NodePort", e.getKey())
                    .isEqualTo(pods);
        }
    }

    private void assertNothingAnswers(int port) {
        for (NetnsLab lab : labs.values()) {
            assertThat(lab.probe(lab.clientNs(), "tcp", CLUSTER_IP, port, 3, 500))
                    .noneMatch(l -> l.startsWith("OK "));
        }
    }

    private static Set<String> ids(List<String> lines) {
        assertThat(lines).allSatisfy(l -> assertThat(l).startsWith("OK "));
        Set<String> out = new TreeSet<>();
        lines.forEach(l -> out.add(l.split(" ")[1]));
        return out;
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what).atMost(Duration.ofSeconds(120)).until(condition::getAsBoolean);
    }

    // ------------------------------------------------------------------------------------------------ objects

    private void apply(io.fabric8.kubernetes.api.model.HasMetadata o) {
        client.resource(o).createOr(NonDeletingOperation::update);
    }

    /** NodePort Service "web": port → targetPort 8080. */
    private static Service service(int port) {
        return new ServiceBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("web")
                .endMetadata()
                .withNewSpec()
                .withType("NodePort")
                .withClusterIP(CLUSTER_IP)
                .withClusterIPs(CLUSTER_IP)
                .addNewPort()
                .withName("http")
                .withProtocol("TCP")
                .withPort(port)
                .withNewTargetPort(8080)
                .withNodePort(NODE_PORT)
                .endPort()
                .endSpec()
                .build();
    }

    /** The Service's one EndpointSlice with the given pods. */
    private io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice slice(int... pods) {
        EndpointSliceBuilder b = new EndpointSliceBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName("web-1")
                .addToLabels("kubernetes.io/service-name", "web")
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort()
                .withName("http")
                .withProtocol("TCP")
                .withPort(8080)
                .endPort();
        for (int p : pods) {
            b.addNewEndpoint()
                    .withAddresses(labs.get("node-a").podIPv4(p))
                    .withNewConditions()
                    .withReady(true)
                    .withServing(true)
                    .withTerminating(false)
                    .endConditions()
                    .withNodeName(p == 0 ? "node-a" : "node-b")
                    .endEndpoint();
        }
        return b.build();
    }

    private static io.fabric8.kubernetes.api.model.Node node(String name, String ip) {
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewStatus()
                .addNewAddress()
                .withType("InternalIP")
                .withAddress(ip)
                .endAddress()
                .endStatus()
                .build();
    }
}
