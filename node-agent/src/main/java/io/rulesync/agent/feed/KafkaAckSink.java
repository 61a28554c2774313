package io.rulesync.agent.feed;

import io.rulesync.model.ack.NodeAck;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/** Acks on the acks topic, keyed by cluster. Sending is asynchronous; a lost ack is superseded by the next. */
public final class KafkaAckSink implements AckSink {
    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final Consumer<String> log;

    public KafkaAckSink(String bootstrap, Map<String, Object> kafkaSettings, String topic, Consumer<String> log) {
        Properties p = new Properties();
        p.putAll(kafkaSettings);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        this.topic = topic;
        this.log = log;
    }

    @Override
    public void publish(NodeAck ack) {
        producer.send(new ProducerRecord<>(topic, ack.cluster(), ack.toJson()), (md, e) -> {
            if (e != null) {
                log.accept("ack of version " + ack.version() + " not sent: " + e.getMessage());
            }
        });
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
