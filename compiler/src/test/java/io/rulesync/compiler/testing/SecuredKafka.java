package io.rulesync.compiler.testing;

import io.rulesync.compiler.cli.CompilerCommand;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.kafka.KafkaAclCommands;
import io.rulesync.testsupport.kafka.SecuredKafkaBroker;
import io.rulesync.testsupport.tls.TestPki;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * Kafka secured as deploy/README.md sets it up: the in-process broker with SASL_SSL, users watcher, compiler and agent,
 * and only the ACLs of that file (read from it). Each role's client settings are a client.properties file, as the
 * deployment gives them; the compiler runs as {@code rulesync compiler --kafka-config FILE} does.
 */
public final class SecuredKafka implements AutoCloseable {
    private static final Map<String, String> PASSWORDS =
            Map.of("watcher", "secret-of-watcher", "compiler", "secret-of-compiler", "agent", "secret-of-agent");

    private final SecuredKafkaBroker broker;
    private final Path dir;

    private SecuredKafka(SecuredKafkaBroker broker, Path dir) {
        this.broker = broker;
        this.dir = dir;
    }

    /** The broker, its users and the documented ACLs; its certificates and the roles' files under {@code dir}. */
    public static SecuredKafka start(Path dir) throws Exception {
        SecuredKafkaBroker broker = SecuredKafkaBroker.start(TestPki.create(dir.resolve("pki"), "kafka"));
        try {
            broker.addUsers(PASSWORDS);
            broker.addAcls(KafkaAclCommands.read(Path.of("../deploy/README.md")));
            return new SecuredKafka(broker, dir);
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
    }

    public SecuredKafkaBroker broker() {
        return broker;
    }

    /** A role's client.properties, as deploy/README.md gives each role. */
    public Path clientFile(String user) {
        Path file = dir.resolve(user + "-client.properties");
        SecuredKafkaBroker.writeClientFile(
                file, SecuredKafkaBroker.clientSettings(user, PASSWORDS.get(user), broker.caFile()));
        return file;
    }

    /** A producer as {@code user}, with more settings as key-value pairs. */
    public KafkaProducer<String, String> producer(String user, String... more) {
        Properties p = new Properties();
        p.putAll(KafkaClientConfig.load(clientFile(user).toString()));
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        for (int i = 0; i < more.length; i += 2) {
            p.put(more[i], more[i + 1]);
        }
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** As the watcher publishes {@code cluster}: a transactional producer whose id has the documented prefix. */
    public KafkaProducer<String, String> watcher(String cluster) {
        KafkaProducer<String, String> p =
                producer("watcher", ProducerConfig.TRANSACTIONAL_ID_CONFIG, "rulesync-watcher." + cluster);
        p.initTransactions();
        return p;
    }

    /** {@code events} of {@code cluster} on the default events topic, in one transaction of the watcher's producer. */
    public static void publish(KafkaProducer<String, String> watcher, String cluster, ClusterEvent... events) {
        watcher.beginTransaction();
        for (ClusterEvent e : events) {
            watcher.send(new ProducerRecord<>(Topics.DEFAULT.events(), cluster, EventCodec.encode(e)));
        }
        watcher.commitTransaction();
    }

    /** The compiler's command as user compiler on {@code db}; topics and groups are the defaults the ACLs name. */
    public ConfigurableApplicationContext startCompiler(TestDatabase db) {
        List<String> args = new ArrayList<>(List.of(
                "--kafka",
                broker.bootstrap(),
                "--kafka-config",
                clientFile("compiler").toString(),
                "--db-url",
                db.url(),
                "--db-user",
                db.user(),
                "--port",
                "0",
                "--partitions",
                "2"));
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

    @Override
    public void close() {
        broker.close();
    }
}
