package io.rulesync.watcher.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testsupport.kafka.KafkaAclCommands;
import io.rulesync.testsupport.kafka.SecuredKafkaBroker;
import io.rulesync.testsupport.tls.TestPki;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.ModelObjects;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka as deploy/README.md sets it up: SASL_SSL with SCRAM-SHA-512, one user per role, and the ACLs of that file
 * (read from it, so that what is documented is what is tested). The watcher publishes and hears resync requests as
 * {@code watcher}, the compiler reads as {@code compiler}; no other user may read the events, and every other way to
 * write them is refused (another user, no TLS, a broker not trusted, a wrong password), leaving the topic as it was. The
 * one exception: the compiler may write without a transaction (its outbox relays operators' rollback and resume
 * requests there; CompilerKafkaAclsTest), but not with the watcher's transactional ids. Every
 * client reads its settings from a {@code client.properties} file through {@link KafkaClientConfig}, as the roles do.
 */
@RequiresKafka
class KafkaSecurityTest {
    private static final Topics TOPICS = Topics.DEFAULT;
    private static final String EVENTS = TOPICS.events();
    private static final Instant T = Instant.parse("2026-12-02T00:00:00Z");
    /** How long a producer waits for metadata: bounds the case without TLS, where the broker can only hang up. */
    private static final String GIVE_UP_MS = "3000";

    @TempDir
    static Path dir;

    private static SecuredKafkaBroker broker;
    private static final Map<String, String> passwords = new LinkedHashMap<>();

    @BeforeAll
    static void brokerWithUsersAndTheDocumentedAcls() throws Exception {
        broker = SecuredKafkaBroker.start(TestPki.create(dir.resolve("pki"), "kafka"));
        for (String user : List.of("watcher", "compiler", "agent", "intruder")) {
            passwords.put(user, "secret-of-" + user);
        }
        broker.addUsers(passwords);
        broker.addAcls(KafkaAclCommands.read(Path.of("../deploy/README.md")));
        // The compiler creates the topics, as it does at start (here before anyone writes).
        try (Admin compiler = Admin.create(client("compiler", passwords.get("compiler")))) {
            compiler.createTopics(List.of(
                            new NewTopic(EVENTS, 2, (short) 1),
                            new NewTopic(TOPICS.deltas(), 2, (short) 1),
                            new NewTopic(TOPICS.deadLetters(), 1, (short) 1),
                            new NewTopic(TOPICS.resyncs(), 2, (short) 1)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** A user's client.properties, as deploy/README.md gives each role, written to a file and loaded as the roles load it. */
    private static Properties client(String user, String password) {
        return load(user + "-client.properties", SecuredKafkaBroker.clientSettings(user, password, broker.caFile()));
    }

    private static Properties load(String file, Map<String, String> settings) {
        Path path = dir.resolve(file);
        SecuredKafkaBroker.writeClientFile(path, settings);
        Properties p = new Properties();
        p.putAll(KafkaClientConfig.load(path.toString()));
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()); // from --kafka, as WatcherCommand does
        return p;
    }

    @Test
    void theWatcherPublishesAndHearsResyncRequestsAndTheCompilerReads() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo"));
        Files.writeString(
                folder.resolve("web.yaml"),
                "kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}");
        FleetConfig fleet = FleetConfig.of(
                new ClusterSpec("demo", new ClusterSource.ManifestFolder(folder), ClusterSettings.DEFAULT));
        Properties compiler = client("compiler", passwords.get("compiler"));
        try (Watcher watcher = Watcher.start(
                        fleet,
                        client("watcher", passwords.get("watcher")),
                        EVENTS,
                        Watcher.Options.defaults().withDigestInterval(Duration.ZERO));
                KafkaConsumer<String, String> consumer = compilerConsumer(compiler, "rulesync-compiler")) {
            consumer.subscribe(List.of(EVENTS)); // in the compiler's group, as the compiler reads
            List<String> read = new ArrayList<>();
            await("the compiler to read the watcher's events")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> poll(consumer, read).contains("demo: upsert Service shop/web"));
            await("the watcher to hear resync requests")
                    .atMost(Duration.ofSeconds(30))
                    .until(watcher::listeningForResyncs);

            try (KafkaProducer<String, String> requests = producer(compiler)) {
                requests.send(new ProducerRecord<>(
                                TOPICS.resyncs(), "demo", new ResyncRequest("demo", "test", T).encode()))
                        .get(30, TimeUnit.SECONDS);
            }
            await("the watcher to republish on the compiler's request")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> poll(consumer, read).stream()
                                    .filter("demo: upsert Service shop/web"::equals)
                                    .count()
                            == 2);
            assertThat(watcher.stats().published()).isPositive();
        }
    }

    @Test
    void noOtherUserMayWriteTheEventsTopic() throws Exception {
        for (String user : List.of("compiler", "agent", "intruder")) {
            Stored before = stored();
            Properties settings = client(user, passwords.get(user));
            // The watcher's own sink with another user's file: its transactional id is refused, so no other user can
            // fence
            // the watcher or write in its name (the compiler's plain writes are its outbox's operator requests, below).
            try (KafkaEventSink sink = KafkaEventSink.create(settings, EVENTS)) {
                EventSink.Delivery d = sink.send(List.of(web(81)));
                assertThat(d.allDelivered()).as(user).isFalse();
                assertThat(d.error()).as(user).isInstanceOf(TransactionalIdAuthorizationException.class);
            }
            assertThat(stored()).as(user).isEqualTo(before);
            if (user.equals("compiler")) {
                continue;
            }
            // A plain producer, neither transactional nor idempotent: the topic itself is refused.
            Properties plain = new Properties();
            plain.putAll(settings);
            plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
            plain.put(ProducerConfig.ACKS_CONFIG, "1");
            try (KafkaProducer<String, String> p = producer(plain)) {
                assertThatThrownBy(() -> p.send(record(web(82))).get(30, TimeUnit.SECONDS))
                        .as(user)
                        .hasCauseInstanceOf(TopicAuthorizationException.class);
            }
            assertThat(stored()).as(user).isEqualTo(before);
        }
    }

    @Test
    void noOtherUserMayReadTheEventsTopic() {
        for (String user : List.of("watcher", "agent", "intruder")) {
            try (KafkaConsumer<String, String> c = compilerConsumer(client(user, passwords.get(user)), null)) {
                List<TopicPartition> parts = List.of(new TopicPartition(EVENTS, 0), new TopicPartition(EVENTS, 1));
                c.assign(parts);
                c.seekToBeginning(parts);
                assertThatThrownBy(() -> c.poll(Duration.ofSeconds(10)))
                        .as(user)
                        .isInstanceOf(TopicAuthorizationException.class);
            }
        }
    }

    @Test
    void aClientWithoutTlsCannotWrite() throws Exception {
        Stored before = stored();
        Properties p = load("plaintext-client.properties", Map.of("security.protocol", "PLAINTEXT"));
        long start = System.nanoTime();
        try (KafkaProducer<String, String> producer = producer(p)) {
            // The broker hears no Kafka request in the bytes (they are not TLS) and hangs up, again and again.
            assertThatThrownBy(() -> producer.send(record(web(83))).get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(TimeoutException.class);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
        assertThat(stored()).isEqualTo(before);
    }

    @Test
    void aClientThatDoesNotTrustTheBrokersCaIsRefusedByTls() throws Exception {
        Stored before = stored();
        TestPki other = TestPki.create(dir.resolve("other-pki"), "other");
        Properties p = load(
                "other-ca-client.properties",
                SecuredKafkaBroker.clientSettings("watcher", passwords.get("watcher"), other.caFile()));
        try (KafkaProducer<String, String> producer = producer(p)) {
            assertThatThrownBy(() -> producer.send(record(web(84))).get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(SslAuthenticationException.class);
        }
        assertThat(stored()).isEqualTo(before);
    }

    @Test
    void aWrongPasswordIsRefused() throws Exception {
        Stored before = stored();
        Properties p = client("watcher", "not-" + passwords.get("watcher"));
        try (KafkaProducer<String, String> producer = producer(p)) {
            assertThatThrownBy(() -> producer.send(record(web(85))).get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }
        assertThat(stored()).isEqualTo(before);
    }

    private static ClusterEvent web(int port) {
        return new ClusterEvent.ObjectUpserted("demo", ModelObjects.service("shop", "web", port), "1", T);
    }

    private static ProducerRecord<String, String> record(ClusterEvent e) {
        return new ProducerRecord<>(EVENTS, e.cluster(), EventCodec.encode(e));
    }

    private static KafkaProducer<String, String> producer(Properties settings) {
        Properties p = new Properties();
        p.putAll(settings);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, GIVE_UP_MS);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /** A consumer as the compiler's: committed records only; in {@code group}, or none. */
    private static KafkaConsumer<String, String> compilerConsumer(Properties settings, String group) {
        Properties p = new Properties();
        p.putAll(settings);
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    /** Adds what one poll brings, as "cluster: event", to {@code read}; returns it. */
    private static List<String> poll(KafkaConsumer<String, String> consumer, List<String> read) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.key() + ": " + describe(r.value())));
        return read;
    }

    private static String describe(String value) {
        return EventCodec.decode(value) instanceof EventCodec.Decoded.Valid v
                ? Events.describe(v.event())
                : "part or invalid";
    }

    /**
     * What the events topic holds: every partition's end (records of aborted transactions and markers included), and
     * every committed record as the compiler's user reads it from the start.
     */
    private record Stored(Map<TopicPartition, Long> ends, List<String> committed) {}

    private static Stored stored() throws Exception {
        Map<TopicPartition, Long> ends = new LinkedHashMap<>();
        try (Admin admin = broker.admin()) {
            Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
            for (int i = 0; i < 2; i++) {
                latest.put(new TopicPartition(EVENTS, i), OffsetSpec.latest());
            }
            admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
                    .all()
                    .get(30, TimeUnit.SECONDS)
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
        }
        List<String> committed = new ArrayList<>();
        try (KafkaConsumer<String, String> c = compilerConsumer(client("compiler", passwords.get("compiler")), null)) {
            List<TopicPartition> parts = List.copyOf(ends.keySet());
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!parts.stream().allMatch(tp -> c.position(tp) >= end.get(tp))) {
                assertThat(System.nanoTime())
                        .as("reading the events topic to its end")
                        .isLessThan(deadline);
                c.poll(Duration.ofMillis(100))
                        .forEach(r -> committed.add(r.partition() + "/" + r.offset() + " " + r.value()));
            }
        }
        return new Stored(ends, committed);
    }
}
