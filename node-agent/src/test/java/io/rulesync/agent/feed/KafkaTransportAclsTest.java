package io.rulesync.agent.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.cli.AgentCommand;
import io.rulesync.compiler.cli.CompilerCommand;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.rules.RulesSnapshot;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
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
 * real delta reader ({@link DeltaFeed}, no consumer group) gets the deltas the real compiler writes as {@code compiler},
 * and its {@link KafkaAckSink}'s acks reach the compiler's acks group and {@code node_status}. Snapshots come from the
 * api in production; here from the same store read ({@link VersionHistory}), so that only Kafka carries the rest.
 */
@RequiresPostgres
@RequiresKafka
class KafkaTransportAclsTest {
    private static final String CLUSTER = "shop";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Map<String, String> PASSWORDS = Map.of("watcher", "secret-of-watcher", "compiler", "secret-of-compiler",
            "agent", "secret-of-agent");

    @TempDir
    Path dir;

    @Test
    void theAgentReadsDeltasAndWritesAcksAsUserAgent() throws Exception {
        try (SecuredKafkaBroker broker = SecuredKafkaBroker.start(TestPki.create(dir.resolve("pki"), "kafka"));
                TestDatabase db = TestDatabase.create()) {
            broker.addUsers(PASSWORDS);
            broker.addAcls(KafkaAclCommands.read(Path.of("../deploy/README.md")));
            try (ConfigurableApplicationContext compiler = startCompiler(broker, db);
                    KafkaProducer<String, String> watcher = watcherProducer(broker)) {
                VersionHistory history = new VersionHistory(db.dataSource());
                publish(watcher, new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                        up(Fixtures.node("n1", "10.1.0.1")), up(Fixtures.service("web", "10.96.0.10")),
                        up(Fixtures.slice("web", "n1", "10.244.0.1")));
                await("a first version").atMost(WAIT).until(() -> history.head(CLUSTER) >= 1);

                AtomicInteger snapshotsAsked = new AtomicInteger();
                SnapshotSource store = new SnapshotSource() {
                    @Override
                    public RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException {
                        return at(cluster, node, history.head(cluster));
                    }

                    @Override
                    public RulesSnapshot at(String cluster, String node, long version) {
                        snapshotsAsked.incrementAndGet();
                        return new RulesSnapshot(cluster, version, Fixtures.T, history.rules(cluster, version).forNode(node));
                    }
                };
                Path rules = Files.createDirectories(dir.resolve("rules"));
                AgentConfig config = agentConfig(broker, rules);
                NodeStatusStore status = new NodeStatusStore(db.dataSource());
                try (AgentLoop agent = config.loop(config.apiClient(), store, ack -> { }).start()) {
                    // The agent acks what it loaded once it reads the deltas; wait for that before changing anything.
                    await("the first ack recorded").atMost(WAIT).until(() -> status.nodeStatus(CLUSTER).stream()
                            .map(NodeStatus::running).toList().equals(List.of(history.head(CLUSTER))));
                    assertThat(agent.died()).isNull();
                    int asked = snapshotsAsked.get();

                    publish(watcher, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                    await("the agent to apply the delta").atMost(WAIT)
                            .until(() -> Files.readString(rules.resolve("n1-ipv4.rules")).contains("10.244.0.2:8080"));
                    long head = history.head(CLUSTER);
                    await("its ack recorded").atMost(WAIT).until(() -> status.nodeStatus(CLUSTER).stream()
                            .map(NodeStatus::running).toList().equals(List.of(head)));
                    assertThat(snapshotsAsked.get()).as("the change came as a delta, not a snapshot").isEqualTo(asked);
                    assertThat(agent.died()).isNull();
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

    /** {@code rulesync agent --transport kafka} with user agent's client.properties; a dry run writes the rules to files. */
    private AgentConfig agentConfig(SecuredKafkaBroker broker, Path rules) {
        AgentCommand command = new AgentCommand();
        new CommandLine(command).parseArgs("--cluster", CLUSTER, "--node", "n1", "--transport", "kafka", "--kafka", broker.bootstrap(),
                "--kafka-config", clientFile(broker, "agent").toString(), "--ip-families", "ipv4", "--dry-run", rules.toString(),
                "--state-dir", dir.resolve("state").toString());
        return command.config();
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
