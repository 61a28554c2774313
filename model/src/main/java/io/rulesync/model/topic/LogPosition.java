package io.rulesync.model.topic;

/**
 * Where the compiler is in one partition of the events topic, and which log that position belongs
 * to. Stored in {@code consumer_position} with the batch it follows.
 *
 * @param next      the next offset to read
 * @param epoch     counts the logs this partition has been read from; part of every stored event's
 *                  identity, because a new log numbers its records from 0 again
 * @param topicId   Kafka's topic id of that log; null for a position stored before rulesync kept it
 * @param start     the log's first offset when last seen
 * @param highWater the highest end offset the log has been seen to have: a log that later ends
 *                  before it lost records it had
 */
public record LogPosition(long next, int epoch, String topicId, long start, long highWater) {
    public LogPosition {
        if (next < 0 || epoch < 0 || start < 0 || highWater < next) {
            throw new IllegalArgumentException(
                    "position " + next + ", epoch " + epoch + ", start " + start + ", high water " + highWater);
        }
    }

    /** After a batch: the next offset moved to {@code next}, which the log evidently reaches. */
    public LogPosition advancedTo(long next) {
        return new LogPosition(next, epoch, topicId, start, Math.max(highWater, next));
    }
}
