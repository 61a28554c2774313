package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.feed.ApiDeltas;
import io.rulesync.agent.feed.DeltaSource;
import io.rulesync.agent.feed.Transport;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.client.ApiClient;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.store.HistoryPruning;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * A node agent that reaches the control plane only through the api: on a node stream (versions down, acks up), or by
 * watch and POSTs; with a token bound to its cluster, and no Kafka anywhere. Versions are stored the way the compiler
 * stores them.
 */
@RequiresPostgres
class AgentOverApiTest {
    private static final String CLUSTER = "shop";
    /** Node n1's own token: it reads its cluster's rules and acks for itself. */
    private static final ApiTokens.Issued N1 =
            ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope(CLUSTER, "n1"));

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private TestDatabase db;
    private CompilerStores store;
    private ConfigurableApplicationContext api;
    private int port;
    private int streamPort;
    private ClusterHead.Step head;
    private long offset;

    @BeforeEach
    void setUp() throws Exception {
        db = TestDatabase.create();
        store = CompilerStores.on(db.dataSource());
        // Found free, then given to the api: a restart must come back on the same addresses, as a real one does.
        try (ServerSocket s = new ServerSocket(0);
                ServerSocket t = new ServerSocket(0)) {
            port = s.getLocalPort();
            streamPort = t.getLocalPort();
        }
        head = ClusterHead.empty(CLUSTER)
                .apply(List.of(
                        Fixtures.upsert(CLUSTER, Fixtures.node("n1", "10.1.0.1")),
                        Fixtures.upsert(CLUSTER, Fixtures.service("web", "10.96.0.10")),
                        Fixtures.upsert(CLUSTER, Fixtures.slice("web", "n1", "10.244.1.1"))));
        commit(head);
        api = startApi();
    }

    @AfterEach
    void tearDown() {
        if (api != null) {
            api.close();
        }
        if (db != null) {
            db.close();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"STREAM", "API"})
    void versionsArriveAndAcksAreStoredAcrossAnApiRestart(Transport transport) throws Exception {
        Path rules = Files.createDirectories(dir.resolve("rules"));
        try (AgentLoop agent = agentConfig(rules, transport).loop().start()) {
            agent.awaitStarted();
            awaitRunning(1);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules"))).contains("10.244.1.1:80");

            endpoints("10.244.1.1", "10.244.1.2");
            awaitRunning(2);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules"))).contains("10.244.1.2:80");

            // The api goes away; a version is stored meanwhile; the api comes back on the same address.
            api.close();
            api = null;
            endpoints("10.244.1.3");
            api = startApi();
            awaitRunning(3);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules")))
                    .contains("10.244.1.3:80")
                    .doesNotContain("10.244.1.2:80");
            assertThat(agent.agent().failures()).isZero();
        }
    }

    /**
     * With an ack interval, versions applied one by one within it are acknowledged together: fewer requests than versions,
     * and the node's status still ends at the newest.
     */
    @Test
    void withAnAckIntervalABurstOfVersionsTakesFewerAckRequests() throws Exception {
        Path rules = Files.createDirectories(dir.resolve("rules"));
        try (AgentLoop agent = agentConfig(rules, Transport.API)
                .withAckInterval(Duration.ofSeconds(4))
                .loop()
                .start()) {
            agent.awaitStarted();
            awaitRunning(1);
            double posts = ackRequests();
            long applies = agent.agent().applies();
            for (int i = 2; i <= 6; i++) {
                endpoints("10.244.1." + i);
                long version = i;
                // Each version applied on its own before the next is stored: five applies, five acks to send.
                await("version " + i + " applied")
                        .atMost(DEADLINE)
                        .until(() -> agent.agent().running() == version);
            }
            awaitRunning(6);
            assertThat(agent.agent().applies() - applies).isEqualTo(5);
            assertThat(ackRequests() - posts).isBetween(1.0, 3.0);
        }
    }

    private double ackRequests() {
        return api
                .getBean(io.micrometer.core.instrument.MeterRegistry.class)
                .find("http.server.requests")
                .tag("method", "POST")
                .tag("uri", "/api/v1/clusters/{cluster}/nodes/{node}/acks")
                .timers()
                .stream()
                .mapToDouble(t -> t.count())
                .sum();
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"STREAM", "API"})
    void aDeltaRetentionRemovedIsAGapTheAgentFillsWithASnapshot(Transport transport) throws Exception {
        endpoints("10.244.1.2");
        endpoints("10.244.1.3");
        new HistoryPruning(db.dataSource()).prune(CLUSTER, 3, 0, 100, 100, Instant.now());
        ApiDeltas deltas = new ApiDeltas(
                new ApiClient(URI.create("http://127.0.0.1:" + port), N1.token()),
                CLUSTER,
                "n1",
                () -> 1,
                () -> "",
                Duration.ofSeconds(5),
                Clock.systemUTC());
        DeltaSource.Polled polled = pollUntilAnswered(deltas);
        assertThat(polled.deltas()).isEmpty();
        assertThat(polled.gap()).contains("HTTP 410").contains("the delta to version 2 is no longer stored");

        // The agent on version 1 of its state file: the snapshot of version 1 is gone too, so it loads the latest.
        Path rules = Files.createDirectories(dir.resolve("rules"));
        try (AgentLoop agent = agentConfig(rules, transport).loop().start()) {
            agent.awaitStarted();
            awaitRunning(3);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules"))).contains("10.244.1.3:80");
        }
    }

    /**
     * The database restored from a backup while the api and the node run: the version the node ran was lost, and its
     * number came again for other rules. The node must not apply the next delta on top of what it runs (the Service the
     * delta leaves alone would keep the lost endpoints for good): it loads the restored history instead.
     */
    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"STREAM", "API"})
    @RequiresTool({"pg_dump", "pg_restore"})
    void afterARestoreFromABackupTheNodeRunsTheRestoredHistoryNotTheLostOne(Transport transport) throws Exception {
        Path rules = Files.createDirectories(dir.resolve("rules"));
        Path backup = dir.resolve("backup.dump");
        try (AgentLoop agent = agentConfig(rules, transport).loop().start()) {
            String lost = runVersion3ThenRestoreTo2(agent, rules, backup);
            endpoints("10.244.1.4"); // version 3 again, of another history
            head = head.next()
                    .apply(List.of(
                            Fixtures.upsert(CLUSTER, Fixtures.service("db", "10.96.0.11")),
                            Fixtures.upsert(CLUSTER, Fixtures.slice("db", "n1", "10.244.2.1"))));
            commit(head); // version 4: changes only Service db

            awaitRunning(4);
            assertThat(agent.agent().runningLineage())
                    .isEqualTo(head.next().lineage())
                    .isNotEqualTo(lost);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules")))
                    .contains("10.244.1.4:80", "10.244.2.1:")
                    .doesNotContain("10.244.1.3:80");
        }
    }

    /**
     * A restore that takes away the version the node runs, with nothing new stored after it: nothing would wake the node
     * (it waits for versions after one that is gone), so the api tells it as it notices the newest version move back, and
     * the node goes back to the restored history's newest, then on with what follows.
     */
    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"STREAM", "API"})
    @RequiresTool({"pg_dump", "pg_restore"})
    void aRestoreThatTakesAwayTheVersionTheNodeRunsTakesTheNodeBack(Transport transport) throws Exception {
        Path rules = Files.createDirectories(dir.resolve("rules"));
        Path backup = dir.resolve("backup.dump");
        try (AgentLoop agent = agentConfig(rules, transport).loop().start()) {
            runVersion3ThenRestoreTo2(agent, rules, backup);
            awaitRunning(2);
            await("the node back on version 2")
                    .atMost(DEADLINE)
                    .until(() -> agent.agent().running() == 2);
            assertThat(agent.agent().runningLineage()).isEqualTo(head.next().lineage());
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules")))
                    .contains("10.244.1.2:80")
                    .doesNotContain("10.244.1.3:80");

            endpoints("10.244.1.4");
            awaitRunning(3);
            assertThat(Files.readString(rules.resolve("n1-ipv4.rules")))
                    .contains("10.244.1.4:80")
                    .doesNotContain("10.244.1.3:80");
        }
    }

    /**
     * Takes the node to version 2, backs the database up into {@code backup}, takes the node to version 3 (endpoint
     * 10.244.1.3), then restores the backup under the running api and agent, and the fixture's head with it: the next
     * version stored is a version 3 again. Returns the lineage of the lost version 3.
     */
    private String runVersion3ThenRestoreTo2(AgentLoop agent, Path rules, Path backup) throws Exception {
        agent.awaitStarted();
        endpoints("10.244.1.2");
        awaitRunning(2);
        db.dump(backup);
        ClusterHead.Step atBackup = head;
        long offsetAtBackup = offset;

        endpoints("10.244.1.3"); // version 3, lost by the restore
        awaitRunning(3);
        String lost = agent.agent().runningLineage();
        assertThat(Files.readString(rules.resolve("n1-ipv4.rules"))).contains("10.244.1.3:80");

        db.restore(backup);
        head = atBackup;
        offset = offsetAtBackup;
        return lost;
    }

    private static DeltaSource.Polled pollUntilAnswered(ApiDeltas deltas) {
        for (int i = 0; i < 100; i++) {
            DeltaSource.Polled p = deltas.poll(Duration.ofMillis(200));
            if (!p.deltas().isEmpty() || p.gap() != null) {
                return p;
            }
        }
        throw new AssertionError("no answer from the api in 20 s");
    }

    private AgentConfig agentConfig(Path rules, Transport transport) {
        // No Kafka: the bootstrap address is one nothing listens on, and the agent never uses it.
        AgentConfig c = new AgentConfig(
                CLUSTER,
                "n1",
                "127.0.0.1:9",
                Map.of(),
                Topics.DEFAULT,
                URI.create("http://127.0.0.1:" + port),
                N1.token(),
                List.of(IpFamily.IPV4),
                rules,
                null,
                dir.resolve("state"),
                Duration.ofSeconds(30),
                50);
        return transport == Transport.STREAM ? c.withStream("127.0.0.1:" + streamPort) : c.withTransport(transport);
    }

    private void awaitRunning(long version) {
        NodeStatusStore status = new NodeStatusStore(db.dataSource());
        await("node n1 acked version " + version).atMost(DEADLINE).until(() -> {
            Optional<NodeStatus> s = status.nodeStatus(CLUSTER).stream()
                    .filter(n -> n.node().equals("n1"))
                    .findFirst();
            return s.isPresent() && s.get().running() == version;
        });
    }

    private void endpoints(String... ips) throws Exception {
        ClusterEvent e = Fixtures.upsert(CLUSTER, Fixtures.slice("web", "n1", ips));
        head = head.next().apply(List.of(e));
        commit(head);
    }

    private void commit(ClusterHead.Step step) throws Exception {
        long seq = step.next().version();
        store.batches()
                .commit(new Batch(
                        "fixture",
                        "events",
                        0,
                        offset == 0 ? -1 : offset,
                        offset + 1,
                        List.of(new Batch.EventRow(
                                CLUSTER, offset, "upsert", "EndpointSlice", "shop/web-1", "1", Fixtures.T, "{}", seq)),
                        List.of(),
                        List.of(new Batch.VersionRow(
                                CLUSTER,
                                seq,
                                Instant.now(),
                                "{\"test\":true}",
                                "{}",
                                step.diff(),
                                step.next().lineage())),
                        List.of(),
                        List.of()));
        offset++;
    }

    private ConfigurableApplicationContext startApi() {
        ApiCommand command = new ApiCommand().withTokens(List.of(N1.line()));
        new CommandLine(command)
                .parseArgs(
                        "--port=" + port,
                        "--stream-port=" + streamPort,
                        "--address=127.0.0.1",
                        "--db-url=" + db.url(),
                        "--db-user=" + db.user());
        command.withDatabasePassword(db.password());
        return command.start();
    }
}
