package io.rulesync.compiler.runtime;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.store.BatchStore;
import io.rulesync.store.EventLog;
import io.rulesync.store.HistoryPruning;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.Notifications;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.Outbox;
import io.rulesync.store.PartitionWriters;
import io.rulesync.store.StoreConfiguration;
import io.rulesync.store.VersionHistory;
import java.time.Clock;
import java.util.Map;
import java.util.Properties;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.PropertySource;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The compiler service: consumes cluster events, stores versions in PostgreSQL (Flyway migrates
 * the schema at start) and publishes deltas through the outbox (the nodes' acks go to the api). Spring
 * wires the adapters; the work is done by {@link PartitionProcessor} and the pure core.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableConfigurationProperties(CompilerProperties.class)
@PropertySource("classpath:io/rulesync/compiler/compiler-defaults.properties")
@Import(StoreConfiguration.class)
public class CompilerApplication {

    /** The stores (StoreConfiguration, after Flyway) as the write path takes them. */
    @Bean
    CompilerStores compilerStores(
            BatchStore batches,
            EventLog events,
            VersionHistory history,
            Outbox outbox,
            NodeLabelStore labels,
            PartitionWriters writers) {
        return new CompilerStores(batches, events, history, outbox, labels, writers);
    }

    @Bean(destroyMethod = "close")
    ActionExpiry actionExpiry(OperatorActionStore actions, CompilerProperties p, Clock clock, CompilerMetrics metrics) {
        return new ActionExpiry(actions, p.actionTimeout(), clock, metrics);
    }

    @Bean(destroyMethod = "close")
    RetentionSweep retentionSweep(
            HistoryPruning pruning,
            VersionHistory history,
            EventLog events,
            CompilerProperties p,
            Clock clock,
            CompilerMetrics metrics) {
        return new RetentionSweep(
                pruning,
                history,
                events,
                p.retention(),
                clock,
                metrics,
                RetentionSweep.DEFAULT_MAX_VERSIONS,
                RetentionSweep.DEFAULT_MAX_EVENTS,
                p.retentionInterval());
    }

    @Bean
    CompilerMetrics compilerMetrics(ObjectProvider<MeterRegistry> registry) {
        // Without actuator's registry (a plain test context), metrics are kept but not exported.
        return new CompilerMetrics(registry.getIfAvailable(SimpleMeterRegistry::new));
    }

    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    @Bean
    NewTopic eventsTopic(CompilerProperties p) {
        return new NewTopic(p.eventsTopic(), p.partitions(), (short) 1);
    }

    @Bean
    NewTopic deltasTopic(CompilerProperties p) {
        return new NewTopic(p.deltasTopic(), p.partitions(), (short) 1);
    }

    @Bean
    NewTopic deadLetterTopic(CompilerProperties p) {
        return new NewTopic(p.deadLetterTopic(), 1, (short) 1);
    }

    @Bean
    NewTopic resyncTopic(CompilerProperties p) {
        return new NewTopic(p.resyncTopic(), p.partitions(), (short) 1);
    }

    @Bean(destroyMethod = "close")
    KafkaLiveLogs liveLogs(KafkaProperties kafka) {
        return new KafkaLiveLogs(kafka.buildAdminProperties());
    }

    @Bean(destroyMethod = "close")
    OutboxRelay outboxRelay(Outbox outbox, DataSource ds, KafkaProperties kafka) {
        Properties props = new Properties();
        props.putAll(kafka.buildProducerProperties());
        return new OutboxRelay(outbox, new Notifications(ds, Notifications.OUTBOX), OutboxRelay.FALLBACK, props);
    }

    /** Closed after the container stopped: lets go of its partition claims. */
    @Bean(destroyMethod = "close")
    EventsListener eventsListener(
            CompilerProperties p,
            CompilerStores store,
            Clock clock,
            ObjectProvider<PartitionProcessor.VersionListener> versionListener,
            ObjectProvider<PartitionProcessor.Faults> faults,
            CompilerMetrics metrics,
            KafkaLiveLogs logs) {
        return new EventsListener(
                store,
                p.topics(),
                p.group(),
                clock,
                versionListener.getIfAvailable(() -> PartitionProcessor.VersionListener.NONE),
                metrics,
                logs,
                p.resyncCooldown(),
                p.checkpointEvery(),
                p.writerLease(),
                faults.getIfAvailable(() -> PartitionProcessor.Faults.NONE));
    }

    @Bean
    ConcurrentMessageListenerContainer<String, String> eventsContainer(
            CompilerProperties p, KafkaProperties kafka, EventsListener listener, CompilerMetrics metrics) {
        Map<String, Object> consumer = kafka.buildConsumerProperties();
        consumer.put(ConsumerConfig.GROUP_ID_CONFIG, p.group());
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        // The coalescing window: a poll returns after this long, or once this much has piled up.
        consumer.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, (int)
                p.coalesceWindow().toMillis());
        consumer.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1024 * 1024);
        consumer.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);

        ContainerProperties cp = new ContainerProperties(p.eventsTopic());
        cp.setGroupId(p.group());
        cp.setAckMode(ContainerProperties.AckMode.MANUAL);
        // While idle, the listener checks that the log is still the one its positions were taken from.
        cp.setIdleEventInterval(p.logCheckInterval().toMillis());
        cp.setMessageListener(listener);
        cp.setConsumerRebalanceListener(listener);
        ConcurrentMessageListenerContainer<String, String> container =
                new ConcurrentMessageListenerContainer<>(new DefaultKafkaConsumerFactory<>(consumer), cp);
        container.setConcurrency(p.concurrency());
        // A failed batch (say, the database is down) is retried from its first record, forever: skipping it
        // would lose events. Records the decoder refuses become dead letters without failing a batch; one that fails
        // its batch again and again for what it holds is set aside by the listener (PoisonGuard).
        DefaultErrorHandler errors = new DefaultErrorHandler(new FixedBackOff(1000, FixedBackOff.UNLIMITED_ATTEMPTS));
        errors.setRetryListeners(new BatchFailures(metrics));
        container.setCommonErrorHandler(errors);
        return container;
    }
}
