package io.rulesync.compiler.runtime;

import io.rulesync.model.topic.Topics;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rulesync.compiler.*}: topics, consumer groups (the events' and, separately, the acks'),
 * partitions of the topics it creates, the coalescing window (how long a poll waits for a burst
 * to accumulate before compiling it), how often an idle consumer checks that its log is still the
 * one its position was taken from, how often at most a cluster's watcher is asked for a resync
 * after a disagreeing digest, how long an operator action may stay pending before it expires, and how
 * many stored events of a cluster may pass between its checkpoints.
 */
@ConfigurationProperties("rulesync.compiler")
public record CompilerProperties(
        String eventsTopic, String deltasTopic, String deadLetterTopic, String acksTopic, String group, Integer partitions,
        Duration coalesceWindow, Integer concurrency, String acksGroup, String resyncTopic, Duration logCheckInterval,
        Duration resyncCooldown, Duration actionTimeout, Integer checkpointEvery) {

    /** kube-proxy's and the api's default: long enough for a compiler restart, short enough that nobody waits for good. */
    public static final Duration DEFAULT_ACTION_TIMEOUT = Duration.ofMinutes(5);

    public CompilerProperties {
        eventsTopic = eventsTopic == null ? Topics.DEFAULT.events() : eventsTopic;
        deltasTopic = deltasTopic == null ? Topics.DEFAULT.deltas() : deltasTopic;
        deadLetterTopic = deadLetterTopic == null ? Topics.DEFAULT.deadLetters() : deadLetterTopic;
        acksTopic = acksTopic == null ? Topics.DEFAULT.acks() : acksTopic;
        group = group == null ? "rulesync-compiler" : group;
        partitions = partitions == null ? 6 : partitions;
        coalesceWindow = coalesceWindow == null ? Duration.ofMillis(100) : coalesceWindow;
        concurrency = concurrency == null ? 1 : concurrency;
        acksGroup = acksGroup == null ? "rulesync-acks" : acksGroup;
        resyncTopic = resyncTopic == null ? Topics.resyncsOf(eventsTopic) : resyncTopic;
        logCheckInterval = logCheckInterval == null ? Duration.ofSeconds(30) : logCheckInterval;
        resyncCooldown = resyncCooldown == null ? PartitionProcessor.DEFAULT_RESYNC_COOLDOWN : resyncCooldown;
        actionTimeout = actionTimeout == null ? DEFAULT_ACTION_TIMEOUT : actionTimeout;
        checkpointEvery = checkpointEvery == null ? PartitionProcessor.DEFAULT_CHECKPOINT_EVERY : checkpointEvery;
        if (checkpointEvery < 1) {
            throw new IllegalArgumentException("rulesync.compiler.checkpoint-every must be at least 1, not " + checkpointEvery);
        }
    }

    public Topics topics() {
        return new Topics(eventsTopic, deltasTopic, deadLetterTopic, acksTopic, resyncTopic);
    }
}
