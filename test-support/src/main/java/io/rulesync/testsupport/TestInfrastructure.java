package io.rulesync.testsupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Where the integration tests get Kafka and PostgreSQL: from Testcontainers where a Docker engine
 * runs, otherwise an in-process KRaft broker and the local PostgreSQL server. The tests are the same
 * either way. {@code -Drulesync.test.infrastructure=local|containers} forces a choice.
 */
public final class TestInfrastructure {
    private static final Logger log = LoggerFactory.getLogger(TestInfrastructure.class);
    private static Boolean containers;
    private static EmbeddedKafkaKraftBroker broker;
    private static KafkaContainer kafkaContainer;
    private static PostgreSQLContainer postgresContainer;

    private TestInfrastructure() {}

    public static synchronized boolean containers() {
        if (containers == null) {
            String forced = System.getProperty("rulesync.test.infrastructure", "");
            if (forced.equals("local")) {
                containers = false;
            } else if (forced.equals("containers")) {
                containers = true;
            } else {
                boolean docker;
                try {
                    docker = DockerClientFactory.instance().isDockerAvailable();
                } catch (RuntimeException | LinkageError e) {
                    docker = false;
                }
                containers = docker;
            }
            log.info(
                    "integration tests run on {}",
                    containers ? "Testcontainers (Docker)" : "an in-process KRaft broker and the local PostgreSQL");
        }
        return containers;
    }

    /** One broker for the whole test JVM; tests isolate themselves by topic names. */
    public static synchronized String kafkaBootstrapServers() {
        if (containers()) {
            if (kafkaContainer == null) {
                kafkaContainer = new KafkaContainer("apache/kafka:4.1.0");
                kafkaContainer.start();
            }
            return kafkaContainer.getBootstrapServers();
        }
        if (broker == null) {
            broker = new EmbeddedKafkaKraftBroker(1, 2);
            broker.brokerProperty("auto.create.topics.enable", "true");
            // One broker: the transaction log (the watcher's producers are transactional) must fit on it.
            broker.brokerProperty("transaction.state.log.replication.factor", "1");
            broker.brokerProperty("transaction.state.log.min.isr", "1");
            broker.brokerProperty("transaction.state.log.num.partitions", "1");
            broker.afterPropertiesSet();
            Runtime.getRuntime().addShutdownHook(new Thread(broker::destroy, "embedded-kafka-shutdown"));
        }
        return broker.getBrokersAsString();
    }

    /** The PostgreSQL server tests create their own databases on: {@code [jdbcUrlPrefix, user, password]}. */
    public static synchronized String[] postgresServer() {
        if (containers()) {
            if (postgresContainer == null) {
                postgresContainer = new PostgreSQLContainer("postgres:17-alpine");
                postgresContainer.start();
            }
            String url = postgresContainer.getJdbcUrl();
            String prefix = url.substring(0, url.lastIndexOf('/') + 1);
            return new String[] {prefix, postgresContainer.getUsername(), postgresContainer.getPassword()};
        }
        return new String[] {"jdbc:postgresql://127.0.0.1:5432/", "postgres", ""};
    }
}
