package io.rulesync.compiler.eventlog;

import java.util.Objects;

/**
 * One partition of the events topic as Kafka holds it now.
 *
 * @param topicId Kafka's id of the topic: a topic deleted and created again under the same name, or
 *                the same name on another Kafka cluster, has another id
 * @param start   the first offset the log still holds (it grows as retention deletes records)
 * @param end     the offset the next record will get (committed records only)
 */
public record LiveLog(String topicId, long start, long end) {
    public LiveLog {
        Objects.requireNonNull(topicId, "topicId");
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("offsets: start " + start + ", end " + end);
        }
    }
}
