package io.rulesync.compiler.eventlog;

import java.util.Optional;

/** Observes the live events log (Kafka, in production). Failures to reach it are thrown. */
public interface LiveLogs {
    /** Kafka's id of {@code topic} now; empty when no such topic exists. */
    Optional<String> topicId(String topic);

    /** One partition now: its topic id, first offset and end offset. */
    LiveLog live(String topic, int partition);
}
