package io.rulesync.store;

import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.topic.LogPosition;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the compiler's processing of one events partition reads and writes, as four small interfaces. PostgreSQL
 * implements them ({@link BatchStore}, {@link EventLog}, {@link VersionHistory}, {@link NodeLabelStore}); the compiler's
 * seeded simulation runs the same processing against an in-memory model of the same rules, thousands of times a minute.
 */
public record PartitionStore(Writes writes, Events events, Versions versions, Labels labels) {

    /** The database's stores. */
    public static PartitionStore of(
            BatchStore batches, EventLog events, VersionHistory history, NodeLabelStore labels) {
        return new PartitionStore(batches, events, history, labels);
    }

    /** Positions and batches, each written in one transaction, fenced by the stored position (and the writer's claim). */
    public interface Writes {
        /** The stored position of {@code group} in one partition; empty when none was stored. */
        Optional<LogPosition> position(String group, String topic, int partition);

        /**
         * Moves the stored position from {@code expected} to {@code next} and queues {@code outbox}, in one transaction.
         *
         * @throws StaleWriteException the stored position is not {@code expected} (another writer moved on), or
         *                             {@link WriterFencedException}: another writer holds the partition
         */
        void movePosition(
                String group,
                String topic,
                int partition,
                Optional<LogPosition> expected,
                LogPosition next,
                List<Batch.OutboxRow> outbox)
                throws StaleWriteException;

        /**
         * Writes {@code b} whole or not at all; returns the newest event id of each cluster it was asked a checkpoint of.
         *
         * @throws StaleWriteException as {@link #movePosition}
         */
        Map<String, Long> commit(Batch b) throws StaleWriteException;

        /** Replaces a cluster's checkpoint, unless the stored one stands for a later event. */
        void writeCheckpoint(Batch.CheckpointRow c);

        /** Queues messages on their own. */
        void enqueue(List<Batch.OutboxRow> rows);

        /** An operator action's status ({@code pending}, {@code done}, ...); empty when the cluster has no such action. */
        Optional<String> actionStatus(long id, String cluster);
    }

    /** A partition's stored events: what a rebuild replays. */
    public interface Events {
        List<String> clustersOn(String topic, int partition);

        Optional<EventLog.StoredCheckpoint> checkpoint(String cluster);

        /** The id below which retention removed the cluster's events; 0 when none were. */
        long removedBefore(String cluster);

        /** The cluster's whole events (JSON) after event {@code afterId}, in the order stored. */
        List<String> eventPayloadsAfter(String cluster, long afterId);

        /** The parts of a large event whose last part has not come yet. */
        List<String> pendingParts(String cluster);
    }

    /** A cluster's stored versions. */
    public interface Versions {
        /** The newest version; 0 when none. */
        long head(String cluster);

        Optional<String> lineage(String cluster, long seq);

        /** The rollback that pins the cluster, if its newest carried-out action is one. */
        Optional<RecordedAction> pinning(String cluster);

        ClusterRules rules(String cluster, long seq);

        Optional<VersionHistory.VersionInfo> version(String cluster, long seq);
    }

    /** The stored labels of a cluster's nodes. */
    public interface Labels {
        /** Makes them those of {@code nodes}; returns how many nodes' rows changed. */
        int reconcile(String cluster, Map<String, ? extends Map<String, String>> nodes);
    }
}
