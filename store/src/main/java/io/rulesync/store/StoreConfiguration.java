package io.rulesync.store;

import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DependsOn;

/**
 * The stores, on the DataSource Spring Boot builds from {@link DatabaseOptions#springProperties()};
 * imported by both roles (the compiler and the api). Each waits for Flyway's initializer, so no store
 * is used before the schema was migrated (compiler) or validated (api): see this module's README.
 */
@Configuration(proxyBeanMethods = false)
public class StoreConfiguration {

    @Bean
    @DependsOn("flywayInitializer")
    BatchStore batchStore(DataSource dataSource) {
        return new BatchStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    PartitionWriters partitionWriters(DataSource dataSource) {
        return new PartitionWriters(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    Outbox outbox(DataSource dataSource) {
        return new Outbox(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    EventLog eventLog(DataSource dataSource) {
        return new EventLog(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    VersionHistory versionHistory(DataSource dataSource) {
        return new VersionHistory(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    NodeStatusStore nodeStatusStore(DataSource dataSource) {
        return new NodeStatusStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    OperatorActionStore operatorActionStore(DataSource dataSource) {
        return new OperatorActionStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    ProblemStore problemStore(DataSource dataSource) {
        return new ProblemStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    RolloutStore rolloutStore(DataSource dataSource) {
        return new RolloutStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    NotificationStore notificationStore(DataSource dataSource) {
        return new NotificationStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    NodeLabelStore nodeLabelStore(DataSource dataSource) {
        return new NodeLabelStore(dataSource);
    }

    @Bean
    @DependsOn("flywayInitializer")
    HistoryPruning historyPruning(DataSource dataSource) {
        return new HistoryPruning(dataSource);
    }
}
