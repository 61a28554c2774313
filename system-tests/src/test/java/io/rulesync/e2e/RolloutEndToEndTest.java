package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.netns.NetnsLab;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Staged rollout through every real part that runs here: events on the KRaft broker → compiler → PostgreSQL →
 * api (its rollout driver, deltas and snapshots capped by wave) → twelve agents: ten dry runs, and two programming the
 * kernels of network namespaces of their own. The policy is a canary wave and the rest; the canary wave selects its nodes
 * (c-real and c-dry) by a label they carry, so the labels travel from the Node events through the compiler to the api.
 *
 * <p>c-real's {@code iptables-restore} is a wrapper on its PATH that refuses any input sending traffic to pod 1
 * (10.244.0.11), so a version adding that endpoint really fails in the agent's own apply. r-real, in the second wave, is
 * where real packets show which versions reached the rest of the fleet.
 */
@EndToEnd
@RequiresNetns
@RequiresPostgres
@RequiresKafka
class RolloutEndToEndTest {
    private static final String CLUSTER = "fleet";
    private static final String CLUSTER_IP = "10.96.0.10";
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final ApiTokens.Issued OPERATOR = ApiTokens.issue("otto", Role.OPERATOR);
    /** Each node's own token: only it may ack for it. */
    private static final AgentTokens AGENTS = AgentTokens.random();

    private static final List<String> CANARIES = List.of("c-real", "c-dry");
    private static final String POLICY = """
            {"policy": {"waves": [{"name": "canary", "selector": {"matchLabels": {"rollout.example.com/wave": "canary"}}, "bake": "3s"},
                                  {"name": "rest", "percent": 100}],
                        "failWhen": {"ackTimeout": "90s"}, "onFailure": "%s"}, "reason": "canaries first"}""";

    @TempDir
    Path dir;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
    private final Map<String, NetnsLab> labs = new LinkedHashMap<>();
    private final List<String> nodes = new ArrayList<>();
    private NodeStatusStore status;
    private CompilerStores store;
    private String api;
    private String streams;
    /** The operator's requests, once the api runs. */
    private ApiCalls operator;

    @Test
    void aVersionACanaryFailsNeverReachesTheRestAndAGoodOneCompletesEveryWave() throws Exception {
        List<AutoCloseable> close = new ArrayList<>();
        try (TestDatabase db = TestDatabase.create();
                KafkaProducer<String, String> producer =
                        PipelineBenchmark.producer(TestInfrastructure.kafkaBootstrapServers())) {
            try {
                run(db, producer, close);
            } finally {
                for (int i = close.size() - 1; i >= 0; i--) {
                    close.get(i).close();
                }
                labs.values().forEach(NetnsLab::close);
            }
        }
    }

    private void run(TestDatabase db, KafkaProducer<String, String> producer, List<AutoCloseable> close)
            throws Exception {
        for (String real : List.of("c-real", "r-real")) {
            NetnsLab lab = new NetnsLab(3);
            labs.put(real, lab);
            for (int pod = 0; pod < 3; pod++) {
                lab.serve(pod, "tcp", 8080, "pod" + pod);
            }
        }
        nodes.addAll(List.of("c-real", "c-dry", "r-real"));
        for (int i = 0; i < 9; i++) {
            nodes.add("r-" + i);
        }

        ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run);
        close.add(compiler::close);
        store = compiler.getBean(CompilerStores.class);
        status = new NodeStatusStore(db.dataSource());
        ConfigurableApplicationContext apiApp = ApiCalls.startApi(db, topics.events(), tokenLines());
        close.add(apiApp::close);
        api = ApiCalls.baseUrl(apiApp);
        streams = ApiCalls.streamTarget(apiApp);
        operator = new ApiCalls(api, OPERATOR.token());

        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of());
        send(producer, EventCodec.encode(new SettingsChanged(CLUSTER, settings, Fixtures.T)));
        int ip = 1;
        for (String n : nodes) {
            NetnsLab lab = labs.get(n);
            String node = Fixtures.node(n, lab != null ? lab.nodeIPv4() : "192.168.60." + ip++);
            send(
                    producer,
                    up(
                            CANARIES.contains(n)
                                    ? node.replace(
                                            "metadata: {name: " + n + "}",
                                            "metadata: {name: " + n
                                                    + ", labels: {rollout.example.com/wave: canary, kubernetes.io/os: linux}}")
                                    : node));
        }
        send(producer, up(Fixtures.service("web", CLUSTER_IP)), endpoints(0));
        await("the first version with every node and the endpoint", () -> {
            long head = store.history().head(CLUSTER);
            return head > 0
                    && store.history().nodes(CLUSTER, head).size() == nodes.size()
                    && store.history()
                            .rules(CLUSTER, head)
                            .ruleSet("r-real", IpFamily.IPV4)
                            .map(r -> r.render().contains("10.244.0.10:8080"))
                            .orElse(false);
        });
        long v1 = store.history().head(CLUSTER);

        Path wrapper = Files.createDirectories(dir.resolve("c-real-bin"));
        Files.writeString(wrapper.resolve("iptables-restore"), """
                #!/bin/sh
                # This node's iptables-restore refuses any rules that send traffic to pod 1.
                input=$(cat)
                if printf '%%s' "$input" | grep -q '10.244.0.11:8080'; then
                  echo "refused by c-real's iptables-restore: rules for 10.244.0.11:8080" >&2
                  exit 1
                fi
                printf '%%s\\n' "$input" | exec %s "$@"
                """.formatted(realTool("iptables-restore")));
        Files.setPosixFilePermissions(
                wrapper.resolve("iptables-restore"), PosixFilePermissions.fromString("rwxr-xr-x"));
        String path = wrapper + ":" + System.getenv("PATH");
        CommandRunner withWrapper = (argv, stdin, timeout) -> {
            List<String> cmd = new ArrayList<>(List.of("env", "PATH=" + path));
            cmd.addAll(argv);
            return HostCommand.PROCESSES.run(cmd, stdin, timeout);
        };
        for (String n : nodes) {
            AgentConfig config = new AgentConfig(
                            CLUSTER,
                            n,
                            TestInfrastructure.kafkaBootstrapServers(),
                            Map.of(),
                            topics,
                            URI.create(api),
                            AGENTS.token(CLUSTER, n),
                            List.of(IpFamily.IPV4),
                            labs.containsKey(n) ? null : Files.createDirectories(dir.resolve("rules")),
                            labs.containsKey(n) ? labs.get(n).nodeNs() : null,
                            dir.resolve("state"),
                            Duration.ofSeconds(30),
                            50)
                    // On node streams, as agents run by default: the waves are held back there as on the REST watch.
                    .withStream(streams);
            AgentLoop loop = n.equals("c-real")
                    ? config.loop(withWrapper).start()
                    : config.loop().start();
            close.add(loop);
            loop.awaitStarted();
        }
        awaitRunning(nodes, v1);
        assertThat(reached("r-real")).isEqualTo(Set.of("pod0"));
        // Without a policy, for comparison: a version reaches every node at once.
        Instant sent = Instant.now();
        send(producer, endpoints(0, 2));
        awaitRunning(nodes, awaitHead(v1 + 1));
        Duration withoutPolicy = Duration.between(sent, Instant.now());
        send(producer, endpoints(0));
        v1 = awaitHead(v1 + 2);
        awaitRunning(nodes, v1);

        HttpResponse<String> set = operator.put("/api/v1/clusters/fleet/rollout/policy", POLICY.formatted("halt"));
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);

        // A version c-real cannot apply: it halts at the canary wave.
        send(producer, endpoints(0, 1));
        long v2 = awaitHead(v1 + 1);
        await(
                "the rollout of version " + v2 + " halted",
                () -> "halted".equals(rollout().get("state")));
        Map<?, ?> halted = rollout();
        assertThat((String) halted.get("cause"))
                .startsWith("1 node failed version " + v2 + ": c-real (")
                .contains("refused by c-real's iptables-restore");
        assertThat(halted.get("wave")).isEqualTo("canary");
        // The label selector took exactly the two labelled nodes; the percentage wave took the other ten.
        assertThat(((List<?>) halted.get("waves"))
                        .stream()
                                .map(w -> (Object) ((Map<?, ?>) w).get("nodes"))
                                .toList())
                .containsExactly(2, 10);
        awaitRunning(List.of("c-dry"), v2);
        Thread.sleep(3_000); // longer than the canary's bake: the rest must still not move
        for (String n : nodes) {
            if (!CANARIES.contains(n)) {
                assertThat(node(n).running()).as(n + " of the second wave").isEqualTo(v1);
                assertThat(node(n).lastVersion())
                        .as(n + " never even tried version " + v2)
                        .isEqualTo(v1);
            }
        }
        assertThat(reached("r-real"))
                .as("the second wave's node still reaches the previous endpoints only")
                .isEqualTo(Set.of("pod0"));
        assertThat(node("c-real").lastError()).contains("refused by c-real's iptables-restore");
        assertThat(logEvents()).contains("halted");

        // A fix supersedes the halted version and completes every wave; the halted one is skipped, never applied.
        Instant fixSent = Instant.now();
        send(producer, endpoints(0, 2));
        long v3 = awaitHead(v2 + 1);
        awaitRunning(nodes, v3);
        Duration allAcked = Duration.between(fixSent, Instant.now());
        await(
                "the rollout of version " + v3 + " complete",
                () -> "complete".equals(rollout().get("state")));
        assertThat(reached("r-real")).isEqualTo(Set.of("pod0", "pod2"));
        assertThat(reached("c-real")).isEqualTo(Set.of("pod0", "pod2"));
        // A good version after a completed one: deltas all the way.
        sent = Instant.now();
        send(producer, endpoints(2));
        long v4 = awaitHead(v3 + 1);
        awaitRunning(nodes, v4);
        Duration plain = Duration.between(sent, Instant.now());
        await(
                "the rollout of version " + v4 + " complete",
                () -> "complete".equals(rollout().get("state")));
        assertThat(reached("r-real")).isEqualTo(Set.of("pod2"));
        System.out.printf(
                "change -> all %d nodes acked: no policy %d ms; canary (bake 3 s) then the rest: %d ms, and %d ms for a fix "
                        + "superseding a halted version%n",
                nodes.size(), withoutPolicy.toMillis(), plain.toMillis(), allAcked.toMillis());

        // With rollback: the failing version is halted and the cluster goes back, through the operator's path, pinned.
        operator.put("/api/v1/clusters/fleet/rollout/policy", POLICY.formatted("rollback"));
        send(producer, endpoints(1, 2));
        long v5 = awaitHead(v4 + 1);
        long v6 = awaitHead(v5 + 1); // the rollback
        awaitRunning(nodes, v6);
        await(
                "the rollback's rollout complete",
                () -> "complete".equals(rollout().get("state")));
        assertThat(Files.readString(dir.resolve("rules").resolve("c-dry-ipv4.rules")))
                .as("the canary that applied it is back")
                .doesNotContain("10.244.0.11:8080")
                .contains("10.244.0.12:8080");
        assertThat(reached("r-real")).isEqualTo(Set.of("pod2"));
        for (String n : nodes) {
            if (!CANARIES.contains(n)) {
                assertThat(status.nodeStatus(CLUSTER, List.of(n)).get(0).lastErrorVersion())
                        .as(n)
                        .isNull();
            }
        }
        assertThat(logEvents()).containsSubsequence("halted", "rollback-requested", "started", "completed");
        List<?> audit = (List<?>)
                ApiCalls.json(operator.get("/api/v1/audit?cluster=fleet")).get("actions");
        Map<?, ?> rollback = (Map<?, ?>) audit.get(0);
        assertThat(rollback.get("actor")).isEqualTo("rollout");
        assertThat(((Number) rollback.get("toVersion")).longValue()).isEqualTo(v4);
        assertThat((String) rollback.get("reason"))
                .contains("version " + v5 + " halted")
                .contains("c-real");
        assertThat(operator.get("/actuator/prometheus"))
                .contains(
                        "rulesync_rollout_halted_total 2.0",
                        "rulesync_rollout_rollbacks_total 1.0",
                        "rulesync_rollout_duration_seconds_count");
    }

    private Set<String> reached(String node) {
        NetnsLab lab = labs.get(node);
        Set<String> out = new TreeSet<>();
        for (String l : lab.probe(lab.clientNs(), "tcp", CLUSTER_IP, 80, 30, 3000)) {
            assertThat(l).startsWith("OK ");
            out.add(l.split(" ")[1]);
        }
        return out;
    }

    private static String realTool(String name) throws Exception {
        for (String d : System.getenv("PATH").split(":")) {
            if (Files.isExecutable(Path.of(d, name))) {
                return Path.of(d, name).toString();
            }
        }
        throw new IllegalStateException(name + " is not on the PATH");
    }

    private static String endpoints(int... pods) {
        String[] ips = new String[pods.length];
        for (int i = 0; i < pods.length; i++) {
            ips[i] = "10.244.0." + (10 + pods[i]);
        }
        return up(Fixtures.slice("web", "r-real", ips));
    }

    private static String up(String yaml) {
        return EventCodec.encode(Fixtures.upsert(CLUSTER, yaml));
    }

    private void send(KafkaProducer<String, String> producer, String... events) throws Exception {
        for (String e : events) {
            producer.send(new ProducerRecord<>(topics.events(), CLUSTER, e)).get();
        }
    }

    private long awaitHead(long version) {
        await("version " + version, () -> store.history().head(CLUSTER) >= version);
        return version;
    }

    private void awaitRunning(List<String> which, long version) {
        await(
                which.size() + " nodes running version " + version,
                () -> which.stream().allMatch(n -> {
                    NodeStatus s = status.nodeStatus(CLUSTER, List.of(n)).stream()
                            .findFirst()
                            .orElse(null);
                    return s != null && s.running() == version && s.lastStatus() == NodeAck.Status.APPLIED;
                }));
    }

    private NodeStatus node(String n) {
        return status.nodeStatus(CLUSTER, List.of(n)).get(0);
    }

    private Map<?, ?> rollout() {
        try {
            return ApiCalls.json(operator.get("/api/v1/clusters/fleet/rollout"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private List<Object> logEvents() {
        List<Object> events = new ArrayList<>(((List<?>) rollout().get("log"))
                .stream().map(e -> ((Map<?, ?>) e).get("event")).toList());
        java.util.Collections.reverse(events);
        return events;
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what).atMost(DEADLINE).until(condition::getAsBoolean);
    }

    private List<String> tokenLines() {
        List<String> lines = new ArrayList<>(List.of(OPERATOR.line()));
        lines.addAll(AGENTS.lines(CLUSTER, nodes));
        return lines;
    }
}
