package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The events log replaced or cut short under the compiler, on a real broker: the topic deleted and
 * created again while the compiler runs, and records deleted below the stored position (retention)
 * while it is stopped. Nothing is lost without a word: the compiler resumes at what the live log
 * holds, asks for a resync, and the watcher's answer (scripted here) makes the cluster right.
 */
@RequiresPostgres
@RequiresKafka
class EventsLogKafkaTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);

    private ConfigurableApplicationContext start(TestDatabase db) {
        return TestCompiler.start(db, topics, run, Map.of("rulesync.compiler.log-check-interval", "1s"));
    }

    private static Admin admin() {
        return Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers()));
    }

    private void produce(String... values) throws Exception {
        try (KafkaProducer<String, String> producer =
                PipelineBenchmark.producer(TestInfrastructure.kafkaBootstrapServers())) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(topics.events(), "a", v)).get();
            }
        }
    }

    /** Cluster a, one Service, its endpoints. */
    private static String[] state(String... endpoints) {
        return new String[] {
            ScriptedEvents.settings("a"),
            ScriptedEvents.node("a", "n1", "10.1.0.1"),
            ScriptedEvents.service("a", "web", "10.96.0.1"),
            ScriptedEvents.slice("a", "web", endpoints)
        };
    }

    private static String rules(CompilerStores store) {
        long head = store.history().head("a");
        return head == 0
                ? ""
                : store.history()
                        .rules("a", head)
                        .ruleSet("n1", IpFamily.IPV4)
                        .map(r -> r.render())
                        .orElse("");
    }

    private void firstVersion(CompilerStores store) throws Exception {
        produce(state("10.244.0.1"));
        await("a first version").atMost(DEADLINE).until(() -> rules(store).contains("10.244.0.1:8080"));
    }

    /** Reads the resync topic from its start until a request for cluster a is there. */
    private ResyncRequest awaitResyncRequest() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "resync-reader-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topics.resyncs()));
            long end = System.nanoTime() + DEADLINE.toNanos();
            while (System.nanoTime() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    if ("a".equals(r.key())) {
                        return ResyncRequest.decode(r.value());
                    }
                }
            }
        }
        throw new AssertionError("no resync request for cluster a on " + topics.resyncs());
    }

    /**
     * Deletes the events topic and creates it again (unless the compiler's consumer already did, by asking for it). The
     * wait is for a topic that is gone or has a new id: the consumer's metadata requests can create it again between two
     * looks, so "gone" alone may never be seen.
     */
    private void recreate(Admin admin) throws Exception {
        Uuid oldId = topicId(admin).orElseThrow();
        admin.deleteTopics(List.of(topics.events())).all().get();
        await("the topic to be gone or created again").atMost(DEADLINE).until(() -> {
            try {
                return topicId(admin).map(id -> !id.equals(oldId)).orElse(true);
            } catch (Exception e) {
                return false;
            }
        });
        try {
            admin.createTopics(List.of(new NewTopic(topics.events(), 2, (short) 1)))
                    .all()
                    .get();
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(TopicExistsException.class);
        }
    }

    private Optional<Uuid> topicId(Admin admin) throws Exception {
        if (!admin.listTopics().names().get().contains(topics.events())) {
            return Optional.empty();
        }
        try {
            return Optional.of(admin.describeTopics(List.of(topics.events()))
                    .allTopicNames()
                    .get()
                    .get(topics.events())
                    .topicId());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private Optional<LogPosition> positionOfA(CompilerStores store, Admin admin) throws Exception {
        int partitions = admin.describeTopics(List.of(topics.events()))
                .allTopicNames()
                .get()
                .get(topics.events())
                .partitions()
                .size();
        // The default partitioner: murmur2 of the key, as the producer chose.
        int partition = org.apache.kafka.common.utils.Utils.toPositive(
                        org.apache.kafka.common.utils.Utils.murmur2("a".getBytes()))
                % partitions;
        return store.batches().position("compiler-" + run, topics.events(), partition);
    }

    @Test
    void aTopicCreatedAgainUnderARunningCompilerIsReadFromItsStartAndResynced() throws Exception {
        try (TestDatabase db = TestDatabase.create();
                Admin admin = admin()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            try (ConfigurableApplicationContext compiler = start(db)) {
                firstVersion(store);
                String oldId = positionOfA(store, admin).orElseThrow().topicId();
                long oldPosition = positionOfA(store, admin).orElseThrow().next();

                recreate(admin);
                // The new log is longer than the old position: Kafka itself would go on reading at that offset and skip
                // the edit below. The compiler must read it from its start.
                List<String> newLog = new ArrayList<>(List.of(state("10.244.0.1", "10.244.0.2")));
                for (int i = 0; i < oldPosition + 2; i++) {
                    newLog.add(ScriptedEvents.service("a", "extra-" + i, "10.96.1." + (i + 1)));
                }
                produce(newLog.toArray(String[]::new));

                await("the edit in the new log to become a version")
                        .atMost(DEADLINE)
                        .until(() -> rules(store).contains("10.244.0.2:8080")
                                && rules(store).contains("shop/extra-0:http"));
                LogPosition p = positionOfA(store, admin).orElseThrow();
                assertThat(p.topicId()).isNotEqualTo(oldId);
                assertThat(p.epoch()).isEqualTo(1);
                assertThat(p.next()).isEqualTo(newLog.size());
                assertThat(awaitResyncRequest().reason())
                        .contains("a different log")
                        .contains(oldId);
            }
        }
    }

    @Test
    void aTopicCreatedAgainIsNoticedEvenWhenNothingArrivesOnIt() throws Exception {
        try (TestDatabase db = TestDatabase.create();
                Admin admin = admin()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            try (ConfigurableApplicationContext compiler = start(db)) {
                firstVersion(store);
                String oldId = positionOfA(store, admin).orElseThrow().topicId();

                // Records published to the old topic and not read yet would be gone with it, and nothing new arrives:
                // the
                // container's rebalance (here) or the idle check (EventsListenerTest) must notice.
                recreate(admin);
                await("the replaced log to be noticed").atMost(DEADLINE).until(() -> {
                    try {
                        Optional<LogPosition> p = positionOfA(store, admin);
                        return p.isPresent() && !oldId.equals(p.get().topicId());
                    } catch (Exception e) {
                        return false; // the topic is being created again
                    }
                });
                assertThat(awaitResyncRequest().reason()).contains("a different log");
            }
        }
    }

    @Test
    void recordsDeletedBeforeTheyWereReadAreHealedByTheResyncTheCompilerAsksFor() throws Exception {
        try (TestDatabase db = TestDatabase.create();
                Admin admin = admin()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            try (ConfigurableApplicationContext compiler = start(db)) {
                firstVersion(store);
            }
            long versions = store.history().head("a");

            // While the compiler is stopped, an edit is published, and retention deletes it before anyone read it.
            produce(ScriptedEvents.slice("a", "web", "10.244.0.1", "10.244.0.3"));
            Map<TopicPartition, RecordsToDelete> all = new HashMap<>();
            for (int partition = 0; partition < 2; partition++) {
                TopicPartition tp = new TopicPartition(topics.events(), partition);
                long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest()))
                        .partitionResult(tp)
                        .get()
                        .offset();
                all.put(tp, RecordsToDelete.beforeOffset(end));
            }
            admin.deleteRecords(all).all().get();

            try (ConfigurableApplicationContext compiler = start(db)) {
                ResyncRequest request = awaitResyncRequest();
                assertThat(request.reason()).contains("deleted before being read");
                assertThat(store.history().head("a"))
                        .as("nothing to compile from the deleted edit")
                        .isEqualTo(versions);
                // The watcher answers with the cluster's whole state, which includes the lost edit.
                produce(state("10.244.0.1", "10.244.0.3"));
                await("the lost edit to become a version")
                        .atMost(DEADLINE)
                        .until(() -> rules(store).contains("10.244.0.3:8080"));
                assertThat(store.history().head("a")).isEqualTo(versions + 1);
                assertThat(positionOfA(store, admin).orElseThrow().epoch()).isZero();
            }
        }
    }
}
