package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.cli.AgentCommand;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.compiler.cli.CompilerCommand;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.kafka.KafkaAclCommands;
import io.rulesync.testsupport.kafka.SecuredKafkaBroker;
import io.rulesync.testsupport.tls.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * An agent on {@code --transport kafka}, as user {@code agent} under the ACLs of deploy/README.md (read from it): its
 * real delta reader ({@code DeltaFeed}, no consumer group) gets the deltas the real compiler writes as {@code compiler};
 * its snapshots and acks go through the real api, the acks with the node's own token (a Kafka principal, shared by the
 * agents, could speak for any node). User {@code agent} may write no topic.
 */
@RequiresPostgres
@RequiresKafka
class KafkaTransportAclsTest {
    private static final String CLUSTER = "shop";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ApiTokens.Issued N1 = ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope(CLUSTER, "n1"));
    private static final Map<String, String> PASSWORDS = Map.of("watcher", "secret-of-watcher", "compiler", "secret-of-compiler",
            "agent", "secret-of-agent");

    @TempDir
    Path dir;

    @Test
    void theAgentReadsDeltasAsUserAgentAndAcksToTheApi() throws Exception {
        try (SecuredKafkaBroker broker = SecuredKafkaBroker.start(TestPki.create(dir.resolve("pki"), "kafka"));
                TestDatabase db = TestDatabase.create()) {
            broker.addUsers(PASSWORDS);
            broker.addAcls(KafkaAclCommands.read(Path.of("../deploy/README.md")));
            try (ConfigurableApplicationContext compiler = startCompiler(broker, db);
                    ConfigurableApplicationContext api = ApiCalls.startApi(db, Topics.DEFAULT.events(), List.of(N1.line()));
                    KafkaProducer<String, String> watcher = watcherProducer(broker)) {
                VersionHistory history = new VersionHistory(db.dataSource());
                publish(watcher, new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                        up(Fixtures.node("n1", "10.1.0.1")), up(Fixtures.service("web", "10.96.0.10")),
                        up(Fixtures.slice("web", "n1", "10.244.0.1")));
                await("a first version").atMost(WAIT).until(() -> history.head(CLUSTER) >= 1);

                Path rules = Files.createDirectories(dir.resolve("rules"));
                AgentConfig config = agentConfig(broker, ApiCalls.baseUrl(api), rules);
                NodeStatusStore status = new NodeStatusStore(db.dataSource());
                try (AgentLoop agent = config.loop().start()) {
                    // The agent acks what it loaded once it reads the deltas; wait for that before changing anything.
                    await("the first ack recorded").atMost(WAIT).until(() -> status.nodeStatus(CLUSTER).stream()
                            .map(NodeStatus::running).toList().equals(List.of(history.head(CLUSTER))));
                    assertThat(agent.died()).isNull();
                    double asked = snapshots(api);

                    publish(watcher, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                    await("the agent to apply the delta").atMost(WAIT)
                            .until(() -> Files.readString(rules.resolve("n1-ipv4.rules")).contains("10.244.0.2:8080"));
                    long head = history.head(CLUSTER);
                    await("its ack recorded").atMost(WAIT).until(() -> status.nodeStatus(CLUSTER).stream()
                            .map(NodeStatus::running).toList().equals(List.of(head)));
                    assertThat(snapshots(api)).as("the change came as a delta, not a snapshot").isEqualTo(asked);
                    assertThat(agent.died()).isNull();
                }

                // The agents' Kafka user writes nothing: not events, not deltas.
                try (KafkaProducer<String, String> agent = producer(broker, "agent")) {
                    for (String topic : List.of(Topics.DEFAULT.events(), Topics.DEFAULT.deltas())) {
                        assertThatThrownBy(() -> agent.send(new ProducerRecord<>(topic, CLUSTER, "{}")).get(30, TimeUnit.SECONDS))
                                .hasCauseInstanceOf(TopicAuthorizationException.class);
                    }
                }
            }
        }
    }

    private ConfigurableApplicationContext startCompiler(SecuredKafkaBroker broker, TestDatabase db) {
        List<String> args = new ArrayList<>(List.of("--kafka", broker.bootstrap(), "--kafka-config", clientFile(broker, "compiler").toString(),
                "--db-url", db.url(), "--db-user", db.user(), "--port", "0", "--partitions", "2"));
        args.addAll(db.passwordOptions());
        CompilerCommand command = new CompilerCommand();
        new CommandLine(command).parseArgs(args.toArray(String[]::new));
        // The shared embedded broker (TestInfrastructure), if an earlier test in this JVM started it, sets this system
        // property, which outranks the command's --kafka: hidden while the compiler reads its settings.
        String shared = System.clearProperty("spring.kafka.bootstrap-servers");
        try {
            return command.start();
        } finally {
            if (shared != null) {
                System.setProperty("spring.kafka.bootstrap-servers", shared);
            }
        }
    }

    /**
     * {@code rulesync agent --transport kafka} with user agent's client.properties and node n1's token; a dry run writes
     * the rules to files.
     */
    private AgentConfig agentConfig(SecuredKafkaBroker broker, String api, Path rules) throws Exception {
        Path token = Files.writeString(dir.resolve("n1.token"), N1.token());
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        AgentCommand command = new AgentCommand();
        new CommandLine(command).parseArgs("--cluster", CLUSTER, "--node", "n1", "--transport", "kafka", "--kafka", broker.bootstrap(),
                "--kafka-config", clientFile(broker, "agent").toString(), "--api", api, "--api-token-file", token.toString(),
                "--ip-families", "ipv4", "--dry-run", rules.toString(), "--state-dir", dir.resolve("state").toString(),
                "--metrics-bind-address", "off", "--healthz-bind-address", "off");
        return command.config();
    }

    /** Snapshot bodies the api sent (a 304, "you run it", is not one). */
    private static double snapshots(ConfigurableApplicationContext api) {
        return api.getBean(MeterRegistry.class).find("rulesync.snapshot.bytes").summaries().stream()
                .filter(m -> !"none".equals(m.getId().getTag("encoding"))).mapToDouble(m -> m.count()).sum();
    }

    private KafkaProducer<String, String> producer(SecuredKafkaBroker broker, String user) {
        Properties p = new Properties();
        p.putAll(KafkaClientConfig.load(clientFile(broker, user).toString()));
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        // Not idempotent: that would be refused for the cluster first, and the topic's ACL is what is shown here.
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** A role's client.properties, as deploy/README.md gives each role. */
    private Path clientFile(SecuredKafkaBroker broker, String user) {
        Path file = dir.resolve(user + "-client.properties");
        SecuredKafkaBroker.writeClientFile(file, SecuredKafkaBroker.clientSettings(user, PASSWORDS.get(user), broker.caFile()));
        return file;
    }

    /** As the watcher publishes a cluster: a transactional producer whose id has the documented prefix. */
    private KafkaProducer<String, String> watcherProducer(SecuredKafkaBroker broker) {
        Properties p = new Properties();
        p.putAll(KafkaClientConfig.load(clientFile(broker, "watcher").toString()));
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rulesync-watcher." + CLUSTER);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        producer.initTransactions();
        return producer;
    }

    private static void publish(KafkaProducer<String, String> watcher, ClusterEvent... events) {
        watcher.beginTransaction();
        for (ClusterEvent e : events) {
            watcher.send(new ProducerRecord<>(Topics.DEFAULT.events(), CLUSTER, EventCodec.encode(e)));
        }
        watcher.commitTransaction();
    }

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(CLUSTER, yaml);
    }
}
