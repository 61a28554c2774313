package io.rulesync.compiler.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RecordedAction;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.kafka.KafkaAclCommands;
import io.rulesync.testsupport.kafka.SecuredKafkaBroker;
import io.rulesync.testsupport.tls.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * The real compiler, as {@code rulesync compiler --kafka-config FILE} runs it, on Kafka secured as deploy/README.md
 * sets it up: user {@code compiler}, and only the ACLs of that file (read from it). It creates its topics, reads the
 * watcher's events in its group, stores versions, publishes their deltas, carries out an operator's rollback (which
 * its outbox relay writes to the events topic).
 */
@RequiresPostgres
@RequiresKafka
class CompilerKafkaAclsTest {
    private static final String CLUSTER = "shop";
    private static final Topics TOPICS = Topics.DEFAULT;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Map<String, String> PASSWORDS = Map.of("watcher", "secret-of-watcher", "compiler", "secret-of-compiler",
            "agent", "secret-of-agent");

    @TempDir
    Path dir;

    @Test
    void theCompilerWorksAsUserCompilerUnderTheDocumentedAcls() throws Exception {
        try (SecuredKafkaBroker broker = SecuredKafkaBroker.start(TestPki.create(dir.resolve("pki"), "kafka"));
                TestDatabase db = TestDatabase.create()) {
            broker.addUsers(PASSWORDS);
            broker.addAcls(KafkaAclCommands.read(Path.of("../deploy/README.md")));
            try (ConfigurableApplicationContext compiler = startCompiler(broker, db)) {
                try (Admin admin = broker.admin()) {
                    Set<String> mine = Set.of(TOPICS.events(), TOPICS.deltas(), TOPICS.deadLetters(), TOPICS.resyncs());
                    await("the compiler to create its topics").atMost(WAIT)
                            .until(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS).containsAll(mine));
                }
                CompilerStores store = compiler.getBean(CompilerStores.class);

                // The watcher's events, in its transaction, as user watcher: a version with the endpoint, then another.
                try (KafkaProducer<String, String> watcher = watcherProducer(broker)) {
                    publish(watcher, new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                            up(Fixtures.node("n1", "10.1.0.1")), up(Fixtures.service("web", "10.96.0.10")),
                            up(Fixtures.slice("web", "n1", "10.244.0.1")));
                    await("a version with the endpoint").atMost(WAIT).until(() -> runs(store, store.history().head(CLUSTER), "10.244.0.1:8080"));
                    long first = store.history().head(CLUSTER);
                    publish(watcher, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                    await("the next version").atMost(WAIT).until(() -> store.history().head(CLUSTER) == first + 1);
                    // The outbox relay deletes a row once Kafka acknowledged it: the deltas were written.
                    await("the deltas published").atMost(WAIT).until(() -> store.outbox().pending(10).isEmpty());

                    // A rollback, recorded as the api records it; the relay carries it to the events topic.
                    OperatorActionStore actions = new OperatorActionStore(db.dataSource());
                    long id = actions.request(CLUSTER, first, "otto", "second endpoint is broken", Instant.now(), TOPICS.events());
                    await("the rollback carried out").atMost(WAIT).until(() -> actions.find(id).map(a -> !a.pending()).orElse(false));
                    RecordedAction done = actions.find(id).orElseThrow();
                    assertThat(done.status()).as(done.outcome()).isEqualTo("done");
                    assertThat(done.resultVersion()).isEqualTo(first + 2);
                    assertThat(runs(store, first + 2, "10.244.0.2:8080")).isFalse();
                }
            }
        }
    }

    /** The compiler's command with its client.properties for user compiler; topics and groups are the defaults the ACLs name. */
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

    /** A role's client.properties, as deploy/README.md gives each role. */
    private Path clientFile(SecuredKafkaBroker broker, String user) {
        Path file = dir.resolve(user + "-client.properties");
        SecuredKafkaBroker.writeClientFile(file, SecuredKafkaBroker.clientSettings(user, PASSWORDS.get(user), broker.caFile()));
        return file;
    }

    private KafkaProducer<String, String> producer(SecuredKafkaBroker broker, String user, String... more) {
        Properties p = new Properties();
        p.putAll(KafkaClientConfig.load(clientFile(broker, user).toString()));
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        for (int i = 0; i < more.length; i += 2) {
            p.put(more[i], more[i + 1]);
        }
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** As the watcher publishes a cluster: a transactional producer whose id has the documented prefix. */
    private KafkaProducer<String, String> watcherProducer(SecuredKafkaBroker broker) {
        KafkaProducer<String, String> p = producer(broker, "watcher", ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rulesync-watcher." + CLUSTER);
        p.initTransactions();
        return p;
    }

    private static void publish(KafkaProducer<String, String> watcher, ClusterEvent... events) {
        watcher.beginTransaction();
        for (ClusterEvent e : events) {
            watcher.send(new ProducerRecord<>(TOPICS.events(), CLUSTER, EventCodec.encode(e)));
        }
        watcher.commitTransaction();
    }

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(CLUSTER, yaml);
    }

    private static boolean runs(CompilerStores store, long version, String endpoint) {
        return version >= 1 && store.history().rules(CLUSTER, version).ruleSet("n1", IpFamily.IPV4)
                .map(r -> r.render().contains(endpoint)).orElse(false);
    }
}
