package io.rulesync.api.acks;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.deltas.HeadWatch;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Nodes' acks: written in batches on a connection of their own, so that a pool taken by queries does not hold them,
 * and answered off the writer's thread.
 */
@Configuration(proxyBeanMethods = false)
public class AcksConfiguration {
    @Bean(destroyMethod = "close")
    AckConnection ackConnection(DataSource shared) throws SQLException {
        return new AckConnection(shared);
    }

    @Bean
    AckWriter ackWriter(AckConnection connection, MeterRegistry meters) {
        // The metrics read on the acks' connection too: a pool taken by queries must not hold the writer.
        return new AckWriter(connection.store(), new AckMetrics(meters, connection.events()), 2_000, meters);
    }

    @Bean
    AckVersions ackVersions(HeadWatch heads, AckConnection connection) {
        return new AckVersions(heads, connection.versions());
    }

    /** Where stored acks' requests are answered (their asynchronous dispatch), off the writer's thread. */
    @Bean(destroyMethod = "shutdownNow")
    ExecutorService ackAnswers() {
        return Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "ack-answers");
            t.setDaemon(true);
            return t;
        });
    }

    @Bean
    AcksController acksController(AckWriter writer, AckVersions versions, ExecutorService ackAnswers) {
        return new AcksController(writer, versions, ackAnswers);
    }
}
