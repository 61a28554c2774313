package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.listener.ConsumerSeekAware.ConsumerSeekCallback;

/**
 * The listener's idle check, driven the way spring-kafka's container drives it but without the
 * container's rebalances (which notice a deleted topic on their own): a real consumer, broker and
 * database. The topic is replaced while records nobody read are on it and nothing new arrives; the
 * idle check alone must notice, reset and ask for a resync.
 */
@RequiresPostgres
@RequiresKafka
class EventsListenerTest {
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
    private final TopicPartition tp = new TopicPartition(topics.events(), 0);

    private static Map<String, Object> admin() {
        return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
    }

    private void produce(String... values) throws Exception {
        try (KafkaProducer<String, String> producer =
                PipelineBenchmark.producer(TestInfrastructure.kafkaBootstrapServers())) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(topics.events(), 0, "a", v)).get();
            }
        }
    }

    /** What spring-kafka's container does with a seek asked for from the idle callback: seek the consumer. */
    private static ConsumerSeekCallback seeking(KafkaConsumer<String, String> consumer, List<String> seeks) {
        return new ConsumerSeekCallback() {
            @Override
            public void seek(String topic, int partition, long offset) {
                seeks.add(topic + "/" + partition + "@" + offset);
                consumer.seek(new TopicPartition(topic, partition), offset);
            }

            @Override
            public void seek(String topic, int partition, Function<Long, Long> offset) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void seekToBeginning(String topic, int partition) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void seekToEnd(String topic, int partition) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void seekRelative(String topic, int partition, long offset, boolean toCurrent) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void seekToTimestamp(String topic, int partition, long timestamp) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void seekToTimestamp(java.util.Collection<TopicPartition> partitions, long timestamp) {
                throw new UnsupportedOperationException();
            }
        };
    }

    @Test
    void theIdleCheckAloneNoticesAReplacedTopicWhoseUnreadRecordsAreGone() throws Exception {
        try (TestDatabase db = TestDatabase.create();
                Admin admin = Admin.create(admin());
                KafkaLiveLogs logs = new KafkaLiveLogs(admin())) {
            admin.createTopics(List.of(new NewTopic(topics.events(), 1, (short) 1)))
                    .all()
                    .get();
            CompilerStores store = CompilerStores.on(db.dataSource());
            EventsListener listener = new EventsListener(
                    store,
                    topics,
                    "compiler-" + run,
                    Clock.systemUTC(),
                    PartitionProcessor.VersionListener.NONE,
                    new CompilerMetrics(new SimpleMeterRegistry()),
                    logs,
                    Duration.ofMinutes(1));
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
            p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
                consumer.assign(List.of(tp));
                listener.onPartitionsAssigned(consumer, List.of(tp));
                produce(
                        ScriptedEvents.settings("a"), ScriptedEvents.node("a", "n1", "10.1.0.1"),
                        ScriptedEvents.service("a", "web", "10.96.0.1"),
                                ScriptedEvents.slice("a", "web", "10.244.0.1"));
                List<ConsumerRecord<String, String>> read = new ArrayList<>();
                // In the test's thread: a KafkaConsumer is not for several threads.
                await("the four records")
                        .atMost(Duration.ofSeconds(60))
                        .pollInSameThread()
                        .until(() -> {
                            consumer.poll(Duration.ofMillis(100)).forEach(read::add);
                            return read.size() == 4;
                        });
                listener.onMessage(read, null, consumer);
                assertThat(store.history().head("a")).isPositive();
                String oldId = store.batches()
                        .position("compiler-" + run, topics.events(), 0)
                        .orElseThrow()
                        .topicId();

                // An edit nobody reads, then the topic is replaced: the edit is gone, and nothing new arrives.
                produce(ScriptedEvents.slice("a", "web", "10.244.0.1", "10.244.0.2"));
                admin.deleteTopics(List.of(topics.events())).all().get();
                await("the topic to be created again")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> {
                            try {
                                admin.createTopics(List.of(new NewTopic(topics.events(), 1, (short) 1)))
                                        .all()
                                        .get();
                                return true;
                            } catch (ExecutionException | InterruptedException e) {
                                return false; // still being deleted
                            }
                        });

                // The idle check comes every 30 s; here, once the new topic is visible.
                await("the new topic to be visible")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> logs.topicId(topics.events())
                                .filter(id -> !id.equals(oldId))
                                .isPresent());
                List<String> seeks = new ArrayList<>();
                listener.onIdleContainer(Map.of(tp, 5L), seeking(consumer, seeks));
                assertThat(seeks).containsExactly(topics.events() + "/0@0");
                LogPosition now = store.batches()
                        .position("compiler-" + run, topics.events(), 0)
                        .orElseThrow();
                assertThat(now.topicId()).isNotEqualTo(oldId);
                assertThat(now.epoch()).isEqualTo(1);
                assertThat(store.outbox().pending(100))
                        .filteredOn(m -> m.topic().equals(topics.resyncs()))
                        .extracting(m -> ResyncRequest.decode(m.payload()).cluster())
                        .containsExactly("a");

                // Idle again on the same log: nothing to do.
                seeks.clear();
                listener.onIdleContainer(Map.of(tp, 0L), seeking(consumer, seeks));
                assertThat(seeks).isEmpty();
            }
        }
    }
}
