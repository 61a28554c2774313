package io.rulesync.agent.feed;

import io.rulesync.model.ack.NodeAck;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Acks on the acks topic, keyed by cluster. Sending is asynchronous; a lost ack is superseded by the next. */
public final class KafkaAckSink implements AckSink {
    private static final Logger log = LoggerFactory.getLogger(KafkaAckSink.class);

    private final KafkaProducer<String, String> producer;
    private final String topic;

    public KafkaAckSink(String bootstrap, Map<String, Object> kafkaSettings, String topic) {
        Properties p = new Properties();
        p.putAll(kafkaSettings);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        this.topic = topic;
    }

    @Override
    public void publish(NodeAck ack) {
        producer.send(new ProducerRecord<>(topic, ack.cluster(), ack.toJson()), (md, e) -> {
            if (e != null) {
                log.atWarn().addKeyValue("cluster", ack.cluster()).addKeyValue("node", ack.node()).addKeyValue("version", ack.version())
                        .log("ack not sent: {}", e.getMessage());
            }
        });
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
