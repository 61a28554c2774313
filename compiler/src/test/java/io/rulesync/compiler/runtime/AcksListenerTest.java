package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.topic.Topics;
import io.rulesync.model.ack.NodeAck.Status;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/** Acks published by agents reach {@code node_status} through the running compiler; bad ones are skipped. */
class AcksListenerTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final String acksTopic = "acks-" + run;

    private ConfigurableApplicationContext start(TestDatabase db) {
        return TestCompiler.start(db, new Topics("events-" + run, "deltas-" + run, "dlt-" + run, acksTopic), run);
    }

    private void produce(List<String[]> keyedValues) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String[] kv : keyedValues) {
                producer.send(new ProducerRecord<>(acksTopic, kv[0], kv[1])).get();
            }
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what).atMost(Duration.ofSeconds(90)).until(condition::getAsBoolean);
    }

    private static String[] ack(NodeAck a) {
        return new String[] {a.cluster(), a.toJson()};
    }

    @Test
    @RequiresPostgres
    @RequiresKafka
    void publishedAcksBecomeNodeStatusAndBadOnesAreSkipped() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            NodeStatusStore store = new NodeStatusStore(db.dataSource());
            try (ConfigurableApplicationContext app = start(db)) {
                produce(List.of(
                        ack(new NodeAck("shop", "node-a", 1, 1, Status.APPLIED, null, 12, 40, "iptables", T)),
                        new String[] {"shop", "{not json"},
                        ack(new NodeAck("shop", "node-b", 1, 1, Status.APPLIED, null, 15, 40, "iptables", T)),
                        new String[] {"edge", new NodeAck("shop", "node-c", 1, 1, Status.APPLIED, null, 1, 1, "iptables", T).toJson()},
                        ack(new NodeAck("shop", "node-a", 2, 1, Status.FAILED, "iptables-restore: exit 1", 30, 40, "iptables",
                                T.plusSeconds(5)))));

                await("both nodes recorded, node-a failing", () -> {
                    List<NodeStatus> s = store.nodeStatus("shop");
                    return s.size() == 2 && s.get(0).failing();
                });
                List<NodeStatus> status = store.nodeStatus("shop");
                assertThat(status).extracting(NodeStatus::node).containsExactly("node-a", "node-b");
                NodeStatus a = status.get(0);
                assertThat(a.running()).isEqualTo(1);
                assertThat(a.lastVersion()).isEqualTo(2);
                assertThat(a.lastError()).isEqualTo("iptables-restore: exit 1");
                assertThat(store.nodeStatus("edge")).isEmpty();

                // The listener goes on after the bad records.
                produce(List.<String[]>of(ack(new NodeAck("shop", "node-a", 3, 3, Status.APPLIED, null, 20, 44, "iptables",
                        T.plusSeconds(9)))));
                await("node-a recovered", () -> store.nodeStatus("shop").get(0).running() == 3);
                assertThat(store.nodeStatus("shop").get(0).failing()).isFalse();
            }
        }
    }

    @Test
    void decodingNamesWhatIsWrong() {
        String good = new NodeAck("shop", "node-a", 1, 1, Status.APPLIED, null, 1, 1, "iptables", T).toJson();
        assertThat(AcksListener.decode("shop", good)).isInstanceOf(AcksListener.Decoded.Valid.class);
        assertThat(AcksListener.decode("shop", null)).isEqualTo(new AcksListener.Decoded.Invalid("the record has no value"));
        assertThat(AcksListener.decode("shop", "[1]")).isEqualTo(new AcksListener.Decoded.Invalid("ack is not a JSON object"));
        assertThat(((AcksListener.Decoded.Invalid) AcksListener.decode("edge", good)).reason())
                .isEqualTo("key: 'edge' is not the ack's cluster 'shop'");
        assertThat(((AcksListener.Decoded.Invalid) AcksListener.decode("shop", good.replace("node-a", "Node_A"))).reason())
                .startsWith("node: 'Node_A' is not a DNS-1123 subdomain");
    }
}
