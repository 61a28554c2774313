package io.rulesync.store;

import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDiff;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Everything one consumed batch of one partition produced, written in one transaction: the events
 * (audit trail), records refused as dead letters, new versions, the outcome of operator actions,
 * outbox messages, the sources whose problem reports changed, and the consumer position after the batch;
 * and which clusters are due a checkpoint ({@link BatchStore#commit} returns the event each would stand for).
 *
 * @param expectedPosition the stored position this batch was read from; -1 when none was stored yet
 * @param epoch            the log epoch of that position (see {@code LogPosition}): the events are stored under it
 */
public record Batch(
        String group,
        String topic,
        int partition,
        long expectedPosition,
        long newPosition,
        List<EventRow> events,
        List<DeadLetterRow> deadLetters,
        List<VersionRow> versions,
        List<ActionRow> actions,
        List<OutboxRow> outbox,
        int epoch,
        List<ProblemRow> problems,
        List<String> checkpointsDue,
        List<NodeLabelRow> nodeLabels) {

    /** A batch that changes no node's labels. */
    public Batch(
            String group,
            String topic,
            int partition,
            long expectedPosition,
            long newPosition,
            List<EventRow> events,
            List<DeadLetterRow> deadLetters,
            List<VersionRow> versions,
            List<ActionRow> actions,
            List<OutboxRow> outbox,
            int epoch,
            List<ProblemRow> problems,
            List<String> checkpointsDue) {
        this(
                group,
                topic,
                partition,
                expectedPosition,
                newPosition,
                events,
                deadLetters,
                versions,
                actions,
                outbox,
                epoch,
                problems,
                checkpointsDue,
                List.of());
    }

    /** A batch that writes no checkpoint. */
    public Batch(
            String group,
            String topic,
            int partition,
            long expectedPosition,
            long newPosition,
            List<EventRow> events,
            List<DeadLetterRow> deadLetters,
            List<VersionRow> versions,
            List<ActionRow> actions,
            List<OutboxRow> outbox,
            int epoch,
            List<ProblemRow> problems) {
        this(
                group,
                topic,
                partition,
                expectedPosition,
                newPosition,
                events,
                deadLetters,
                versions,
                actions,
                outbox,
                epoch,
                problems,
                List.of());
    }

    /** A batch of the first log (epoch 0). */
    public Batch(
            String group,
            String topic,
            int partition,
            long expectedPosition,
            long newPosition,
            List<EventRow> events,
            List<DeadLetterRow> deadLetters,
            List<VersionRow> versions,
            List<ActionRow> actions,
            List<OutboxRow> outbox) {
        this(group, topic, partition, expectedPosition, newPosition, events, deadLetters, versions, actions, outbox, 0);
    }

    /** A batch that changes no problem report. */
    public Batch(
            String group,
            String topic,
            int partition,
            long expectedPosition,
            long newPosition,
            List<EventRow> events,
            List<DeadLetterRow> deadLetters,
            List<VersionRow> versions,
            List<ActionRow> actions,
            List<OutboxRow> outbox,
            int epoch) {
        this(
                group,
                topic,
                partition,
                expectedPosition,
                newPosition,
                events,
                deadLetters,
                versions,
                actions,
                outbox,
                epoch,
                List.of());
    }

    public Batch {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(topic, "topic");
        events = List.copyOf(events);
        deadLetters = List.copyOf(deadLetters);
        versions = List.copyOf(versions);
        actions = List.copyOf(actions);
        outbox = List.copyOf(outbox);
        problems = List.copyOf(problems);
        checkpointsDue = List.copyOf(checkpointsDue);
        nodeLabels = List.copyOf(nodeLabels);
        if (newPosition < expectedPosition) {
            throw new IllegalArgumentException("positions only move forward");
        }
    }

    /** One received event. {@code versionSeq}: the version it led to, if any. */
    public record EventRow(
            String cluster,
            long offset,
            String type,
            String kind,
            String key,
            String resourceVersion,
            Instant observedAt,
            String payload,
            Long versionSeq) {}

    public record DeadLetterRow(long offset, String key, String payload, String reason) {}

    /** A new version: what changed since its parent ({@code seq - 1}). */
    /** @param lineage the version's {@link Lineage}, chained from its parent's by the compiler */
    public record VersionRow(
            String cluster,
            long seq,
            Instant createdAt,
            String cause,
            String settings,
            RulesDiff diff,
            String lineage) {
        public VersionRow {
            Lineage.check("lineage", lineage);
        }

        /** A version whose lineage hashes only its own change, not its parent's: for writers without a compiler's head (tests). */
        public VersionRow(String cluster, long seq, Instant createdAt, String cause, String settings, RulesDiff diff) {
            this(cluster, seq, createdAt, cause, settings, diff, Lineage.next(Lineage.UNKNOWN, seq, diff));
        }
    }

    /**
     * A pending operator action, completed: done with the version it produced, or rejected with
     * {@code refusal}.
     */
    public record ActionRow(long id, Long resultVersion, String refusal) {
        public ActionRow {
            if ((resultVersion == null) == (refusal == null)) {
                throw new IllegalArgumentException("an action is either done with a version or rejected with a reason");
            }
        }
    }

    public record OutboxRow(String topic, String key, String payload) {}

    /**
     * A source of a cluster whose problems changed: they are now {@code problems}, reported (seen by
     * the watcher) at {@code reportedAt}; none means the source's rows go.
     */
    public record ProblemRow(String cluster, String source, List<Problem> problems, Instant reportedAt) {
        public ProblemRow {
            problems = List.copyOf(problems);
            Objects.requireNonNull(reportedAt, "reportedAt");
        }
    }

    /**
     * A cluster's checkpoint: its folded state as text ({@code Checkpoint} in the compiler), standing for every
     * event of the cluster up to {@code lastEventId}; {@code versionSeq} was its head then.
     */
    public record CheckpointRow(
            String cluster, long lastEventId, long versionSeq, int objects, String text, Instant createdAt) {
        public CheckpointRow {
            Objects.requireNonNull(cluster, "cluster");
            Objects.requireNonNull(text, "text");
            Objects.requireNonNull(createdAt, "createdAt");
        }
    }

    /** A node's labels as they are now; {@code labels} null: the node is gone. */
    public record NodeLabelRow(String cluster, String node, java.util.SortedMap<String, String> labels) {
        public NodeLabelRow {
            Objects.requireNonNull(cluster, "cluster");
            Objects.requireNonNull(node, "node");
        }
    }
}
