package io.rulesync.compiler.runtime;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.cluster.Fixtures;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The one cluster the compiler's fault tests feed through the shared broker, as its watcher would: cluster "shop", node
 * n1, Service web on 10.96.0.10 and its endpoints.
 */
final class ShopCluster implements AutoCloseable {
    static final String CLUSTER = "shop";

    private final String eventsTopic;
    private final KafkaProducer<String, String> producer;

    ShopCluster(String eventsTopic) {
        this.eventsTopic = eventsTopic;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    /** The settings, node n1, Service web and its endpoint 10.244.0.1 on n1. */
    void start() throws Exception {
        send(
                new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                up(Fixtures.node("n1", "10.1.0.1")),
                up(Fixtures.service("web", "10.96.0.10")),
                up(Fixtures.slice("web", "n1", "10.244.0.1")));
    }

    /** Sends the events in order, each acknowledged by the broker. */
    void send(ClusterEvent... events) throws Exception {
        for (ClusterEvent e : events) {
            producer.send(new ProducerRecord<>(eventsTopic, CLUSTER, EventCodec.encode(e)))
                    .get();
        }
    }

    static ClusterEvent up(String yaml) {
        return Fixtures.upsert(CLUSTER, yaml);
    }

    /** Whether the cluster's newest stored version sends traffic to {@code endpoint} ("IP:port") from node n1. */
    static boolean runs(CompilerStores store, String endpoint) {
        long head = store.history().head(CLUSTER);
        return head >= 1
                && store.history()
                        .rules(CLUSTER, head)
                        .ruleSet("n1", IpFamily.IPV4)
                        .map(r -> r.render().contains(endpoint))
                        .orElse(false);
    }

    @Override
    public void close() {
        producer.close();
    }
}
