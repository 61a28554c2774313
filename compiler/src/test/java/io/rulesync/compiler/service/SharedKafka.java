package io.rulesync.compiler.service;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/** One real in-process KRaft broker for the whole test JVM; tests isolate themselves by topic names. */
final class SharedKafka {
    private static EmbeddedKafkaKraftBroker broker;

    private SharedKafka() {
    }

    static synchronized String bootstrapServers() {
        if (broker == null) {
            broker = new EmbeddedKafkaKraftBroker(1, 2);
            broker.brokerProperty("auto.create.topics.enable", "true");
            broker.afterPropertiesSet();
            Runtime.getRuntime().addShutdownHook(new Thread(broker::destroy, "embedded-kafka-shutdown"));
        }
        return broker.getBrokersAsString();
    }
}
