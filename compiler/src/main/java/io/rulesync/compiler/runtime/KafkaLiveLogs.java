package io.rulesync.compiler.runtime;

import io.rulesync.compiler.eventlog.LiveLog;
import io.rulesync.compiler.eventlog.LiveLogs;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * {@link LiveLogs} through Kafka's admin client: the topic id from the topic's description, the
 * offsets from ListOffsets. End offsets are read committed, as the compiler consumes.
 */
public final class KafkaLiveLogs implements LiveLogs, AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final Admin admin;

    public KafkaLiveLogs(Map<String, Object> adminConfig) {
        this.admin = Admin.create(adminConfig);
    }

    @Override
    public Optional<String> topicId(String topic) {
        return describe(topic).map(d -> d.topicId().toString());
    }

    @Override
    public LiveLog live(String topic, int partition) {
        String id = topicId(topic).orElseThrow(() -> new IllegalStateException("topic " + topic + " does not exist"));
        TopicPartition tp = new TopicPartition(topic, partition);
        ListOffsetsOptions committed = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
        long start = get(admin.listOffsets(Map.of(tp, OffsetSpec.earliest()), committed)
                        .partitionResult(tp))
                .offset();
        long end = get(admin.listOffsets(Map.of(tp, OffsetSpec.latest()), committed)
                        .partitionResult(tp))
                .offset();
        return new LiveLog(id, start, Math.max(start, end));
    }

    private Optional<TopicDescription> describe(String topic) {
        try {
            return Optional.of(admin.describeTopics(
                            List.of(topic), new DescribeTopicsOptions().timeoutMs((int) TIMEOUT.toMillis()))
                    .allTopicNames()
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw new IllegalStateException(
                    "cannot describe topic " + topic + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "cannot describe topic " + topic + ": no answer within " + TIMEOUT.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static <T> T get(org.apache.kafka.common.KafkaFuture<T> f) {
        try {
            return f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "cannot read offsets: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("cannot read offsets: no answer within " + TIMEOUT.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
