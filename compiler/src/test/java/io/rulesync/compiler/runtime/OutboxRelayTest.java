package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.store.Notifications;
import io.rulesync.store.Outbox;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * The relay reads the outbox when PostgreSQL announces an insert, from whichever connection made it (here a plain one,
 * as the api's in another process), and on its fallback timer when no announcement came. Real PostgreSQL and broker.
 */
@RequiresPostgres
@RequiresKafka
class OutboxRelayTest {
    private final String topic = "outbox-" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void anInsertByAnotherConnectionIsPublishedAtOnceAndOneNobodyAnnouncedOnTheFallbackTimer() throws Exception {
        try (Admin admin = Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        try (TestDatabase db = TestDatabase.create();
                KafkaConsumer<String, String> consumer = consumer()) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            List<String> read = new ArrayList<>();

            // A fallback no test waits for: what arrives was announced.
            try (OutboxRelay relay = relay(db, Duration.ofHours(1))) {
                Thread.sleep(500); // the relay has read the empty outbox and waits
                insert(db, "announced");
                await("the announced row published")
                        .atMost(Duration.ofSeconds(30))
                        .pollInSameThread()
                        .until(() -> poll(consumer, read).contains("announced"));
                await("and taken out of the outbox")
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> db.count("outbox") == 0);
            }

            // Announcements off (the trigger disabled, as if the relay's connection had missed them): the timer finds
            // it.
            try (Connection c = db.dataSource().getConnection();
                    Statement st = c.createStatement()) {
                st.execute("ALTER TABLE outbox DISABLE TRIGGER outbox_inserted");
            }
            try (OutboxRelay relay = relay(db, Duration.ofSeconds(2))) {
                Thread.sleep(500);
                insert(db, "unannounced");
                await("the unannounced row published on the timer")
                        .atMost(Duration.ofSeconds(30))
                        .pollInSameThread()
                        .until(() -> poll(consumer, read).contains("unannounced"));
            }
            assertThat(read).containsExactly("announced", "unannounced");
        }
    }

    private OutboxRelay relay(TestDatabase db, Duration fallback) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        return new OutboxRelay(
                new Outbox(db.dataSource()), new Notifications(db.dataSource(), Notifications.OUTBOX), fallback, p);
    }

    private void insert(TestDatabase db, String payload) throws Exception {
        try (Connection c = db.dataSource().getConnection();
                Statement st = c.createStatement()) {
            st.execute("INSERT INTO outbox (topic, record_key, payload, created_at) VALUES ('" + topic + "', 'k', '"
                    + payload + "', now())");
        }
    }

    private static List<String> poll(KafkaConsumer<String, String> consumer, List<String> read) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            read.add(r.value());
        }
        return read;
    }

    private static KafkaConsumer<String, String> consumer() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }
}
