package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The compiler service as deployed: Spring Boot, spring-kafka against a real KRaft broker, Flyway
 * and JDBC against the real PostgreSQL. Scripted events in, versions and deltas out; restarts and a
 * second instance in the same group change nothing about the history.
 */
@RequiresPostgres
@RequiresKafka
class CompilerApplicationTest {
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);

    private ConfigurableApplicationContext start(TestDatabase db) {
        return TestCompiler.start(db, topics, run);
    }

    private void produce(List<PartitionProcessor.Record> records) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (PartitionProcessor.Record r : records) {
                producer.send(new ProducerRecord<>(topics.events(), r.key(), r.value()))
                        .get();
            }
        }
    }

    private List<ConsumerRecord<String, String>> consumeAll(String topic, int atLeast) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (out.size() < atLeast && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            // Anything else already there.
            c.poll(Duration.ofMillis(500)).forEach(out::add);
        }
        return out;
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what).atMost(Duration.ofSeconds(90)).until(condition::getAsBoolean);
    }

    /** The final rules of a cluster, computed from the events alone (no Kafka, no database). */
    private static ClusterRules expectedFinal(String cluster, List<PartitionProcessor.Record> records) {
        List<ClusterEvent> events = new ArrayList<>();
        for (PartitionProcessor.Record r : records) {
            if (EventCodec.decode(r.value()) instanceof EventCodec.Decoded.Valid v
                    && v.event().cluster().equals(cluster)
                    && r.key().equals(cluster)) {
                events.add(v.event());
            }
        }
        return ClusterHead.empty(cluster).apply(events).next().published();
    }

    @Test
    void eventsBecomeVersionsAndDeltasAcrossRestartsAndTwoInstances() throws Exception {
        List<PartitionProcessor.Record> all = new ArrayList<>();
        ScriptedEvents.batches().forEach(all::addAll);
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            ConfigurableApplicationContext app = start(db);
            produce(all);
            ClusterRules finalA = expectedFinal("a", all);
            ClusterRules finalB = expectedFinal("b", all);
            await(
                    "both clusters compiled",
                    () -> store.history().head("a") > 0
                            && store.history().head("b") > 0
                            && store.history()
                                    .rules("a", store.history().head("a"))
                                    .equals(finalA)
                            && store.history()
                                    .rules("b", store.history().head("b"))
                                    .equals(finalB));
            await("all events stored", () -> db.count("cluster_event") + db.count("dead_letter") == all.size());
            assertThat(db.count("dead_letter")).isEqualTo(2);

            // Deltas: per cluster, one per version, in order, and together they rebuild the last version.
            long headA = store.history().head("a");
            long headB = store.history().head("b");
            List<ConsumerRecord<String, String>> deltas = consumeAll(topics.deltas(), (int) (headA + headB));
            for (String cluster : List.of("a", "b")) {
                ClusterRules rules = ClusterRules.EMPTY;
                long seq = 0;
                for (ConsumerRecord<String, String> r : deltas) {
                    if (r.key().equals(cluster)) {
                        RulesDelta d = RulesDelta.fromJson(r.value());
                        assertThat(d.base()).isEqualTo(seq);
                        seq = d.target();
                        rules = d.diff().applyTo(rules);
                    }
                }
                assertThat(seq).isEqualTo(store.history().head(cluster));
                assertThat(rules).isEqualTo(cluster.equals("a") ? finalA : finalB);
            }
            assertThat(consumeAll(topics.deadLetters(), 2))
                    .extracting(ConsumerRecord::value)
                    .anySatisfy(v -> assertThat(v).contains("not JSON"));

            // Restart: nothing is compiled twice.
            app.close();
            app = start(db);
            ConfigurableApplicationContext second = start(db); // a second instance in the same group
            long events = db.count("cluster_event");
            produce(List.of(
                    new PartitionProcessor.Record(0, "a", ScriptedEvents.slice("a", "web", "10.244.0.7")),
                    new PartitionProcessor.Record(
                            0, "b", ScriptedEvents.slice("b", "api", "10.244.9.9", "10.244.9.10"))));
            await(
                    "the new events compiled",
                    () -> store.history().head("a") == headA + 1
                            && store.history().head("b") == headB + 1);
            await("no stray events", () -> db.count("cluster_event") == events + 2);
            Thread.sleep(1000); // deliberate: time for a wrong second compile to show up before the checks
            assertThat(store.history().head("a")).isEqualTo(headA + 1);
            assertThat(store.history().head("b")).isEqualTo(headB + 1);
            assertThat(db.count("cluster_event")).isEqualTo(events + 2);
            second.close();
            app.close();
        }
    }
}
