package io.rulesync.compiler.runtime;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.listener.RetryListener;

/**
 * Says so when a batch of events could not be committed and is retried (the database did not answer, or refused): a
 * WARN line naming the partitions, the attempt and the cause, and {@code rulesync.batches.failed}. A batch that keeps
 * failing holds its partitions' clusters back, and was visible only as Spring's stack traces.
 */
final class BatchFailures implements RetryListener {
    private static final Logger log = LoggerFactory.getLogger(BatchFailures.class);
    private final CompilerMetrics metrics;

    BatchFailures(CompilerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void failedDelivery(ConsumerRecords<?, ?> records, Exception ex, int attempt) {
        metrics.batchFailed();
        Throwable cause = ex;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        log.warn(
                "a batch of {} events of partition(s) {} could not be committed (attempt {}), retrying it from its first record: {}",
                records.count(),
                records.partitions().stream()
                        .map(TopicPartition::toString)
                        .sorted()
                        .toList(),
                attempt,
                cause.toString());
    }

    @Override
    public void failedDelivery(ConsumerRecord<?, ?> record, Exception ex, int attempt) {
        // The compiler's listener takes batches; a single record's failure comes through the batch method.
    }
}
