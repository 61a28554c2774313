package io.rulesync.compiler.service;

import io.rulesync.model.topic.Topics;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rulesync.compiler.*}: topics, consumer groups (the events' and, separately, the acks'),
 * partitions of the topics it creates, and the coalescing window (how long a poll waits for a burst
 * to accumulate before compiling it).
 */
@ConfigurationProperties("rulesync.compiler")
public record CompilerProperties(
        String eventsTopic, String deltasTopic, String deadLetterTopic, String acksTopic, String group, Integer partitions,
        Duration coalesceWindow, Integer concurrency, String acksGroup) {

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
    }

    public Topics topics() {
        return new Topics(eventsTopic, deltasTopic, deadLetterTopic, acksTopic);
    }
}
