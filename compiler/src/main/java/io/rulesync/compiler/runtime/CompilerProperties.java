package io.rulesync.compiler.runtime;

import io.rulesync.compiler.retention.RetentionPolicy;
import io.rulesync.model.topic.Topics;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rulesync.compiler.*}: topics, the consumer group,
 * partitions of the topics it creates, the coalescing window (how long a poll waits for a burst
 * to accumulate before compiling it), how often an idle consumer checks that its log is still the
 * one its position was taken from, how often at most a cluster's watcher is asked for a resync
 * after a disagreeing digest, how long an operator action may stay pending before it expires, and how
 * many stored events of a cluster may pass between its checkpoints; retention: how many versions and/or how long a
 * cluster's history is kept ({@code retain-versions}, {@code retain-for}; neither: everything) and how often it is
 * enforced; and how long another group's silent compiler keeps its partitions ({@code writer-lease}).
 */
@ConfigurationProperties("rulesync.compiler")
public record CompilerProperties(
        String eventsTopic,
        String deltasTopic,
        String deadLetterTopic,
        String group,
        Integer partitions,
        Duration coalesceWindow,
        Integer concurrency,
        String resyncTopic,
        Duration logCheckInterval,
        Duration resyncCooldown,
        Duration actionTimeout,
        Integer checkpointEvery,
        Integer retainVersions,
        Duration retainFor,
        Duration retentionInterval,
        Duration writerLease) {

    /** kube-proxy's and the api's default: long enough for a compiler restart, short enough that nobody waits for good. */
    public static final Duration DEFAULT_ACTION_TIMEOUT = Duration.ofMinutes(5);

    /**
     * How long a compiler of another consumer group must have been silent before a standing-by compiler takes its
     * partitions: longer than a long batch or a database hiccup, short enough that a deployment replaced by another
     * hands over within a minute.
     */
    public static final Duration DEFAULT_WRITER_LEASE = Duration.ofSeconds(30);

    /** How long a cluster's history is kept unless told otherwise. */
    public static final Duration DEFAULT_RETAIN_FOR = Duration.ofDays(30);

    public CompilerProperties {
        eventsTopic = eventsTopic == null ? Topics.DEFAULT.events() : eventsTopic;
        deltasTopic = deltasTopic == null ? Topics.DEFAULT.deltas() : deltasTopic;
        deadLetterTopic = deadLetterTopic == null ? Topics.DEFAULT.deadLetters() : deadLetterTopic;
        group = group == null ? "rulesync-compiler" : group;
        partitions = partitions == null ? 6 : partitions;
        coalesceWindow = coalesceWindow == null ? Duration.ofMillis(100) : coalesceWindow;
        concurrency = concurrency == null ? 1 : concurrency;
        resyncTopic = resyncTopic == null ? Topics.resyncsOf(eventsTopic) : resyncTopic;
        logCheckInterval = logCheckInterval == null ? Duration.ofSeconds(30) : logCheckInterval;
        resyncCooldown = resyncCooldown == null ? PartitionProcessor.DEFAULT_RESYNC_COOLDOWN : resyncCooldown;
        actionTimeout = actionTimeout == null ? DEFAULT_ACTION_TIMEOUT : actionTimeout;
        checkpointEvery = checkpointEvery == null ? PartitionProcessor.DEFAULT_CHECKPOINT_EVERY : checkpointEvery;
        retentionInterval = retentionInterval == null ? Duration.ofMinutes(5) : retentionInterval;
        writerLease = writerLease == null ? DEFAULT_WRITER_LEASE : writerLease;
        if (writerLease.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException(
                    "rulesync.compiler.writer-lease must be at least 1s, not " + writerLease);
        }
        if (retainFor == null && retainVersions == null) {
            retainFor = DEFAULT_RETAIN_FOR;
        }
        retention(); // refuses bad limits at start
        if (checkpointEvery < 1) {
            throw new IllegalArgumentException(
                    "rulesync.compiler.checkpoint-every must be at least 1, not " + checkpointEvery);
        }
    }

    /** {@code retain-for} 0 (or a negative) means no age limit; {@code retain-versions} 0, no count limit. */
    public RetentionPolicy retention() {
        return new RetentionPolicy(
                retainVersions == null || retainVersions == 0 ? OptionalInt.empty() : OptionalInt.of(retainVersions),
                retainFor == null || retainFor.isZero() || retainFor.isNegative()
                        ? Optional.empty()
                        : Optional.of(retainFor));
    }

    public Topics topics() {
        return new Topics(eventsTopic, deltasTopic, deadLetterTopic, resyncTopic);
    }
}
