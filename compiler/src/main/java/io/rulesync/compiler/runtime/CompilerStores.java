package io.rulesync.compiler.runtime;

import io.rulesync.store.BatchStore;
import io.rulesync.store.EventLog;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.Outbox;
import io.rulesync.store.PartitionStore;
import io.rulesync.store.PartitionWriters;
import io.rulesync.store.VersionHistory;
import javax.sql.DataSource;

/**
 * The stores the compiler's write path works with: it claims partitions, commits batches and positions, replays the
 * event log and reads heads and rules back when it takes a partition (and puts right the stored node labels), and
 * relays the outbox.
 */
public record CompilerStores(
        BatchStore batches,
        EventLog events,
        VersionHistory history,
        Outbox outbox,
        NodeLabelStore labels,
        PartitionWriters writers) {

    /** These stores, with every batch and position move checked against {@code claim} ({@link BatchStore#fencedBy}). */
    public CompilerStores fencedBy(PartitionWriters.Claim claim) {
        return new CompilerStores(batches.fencedBy(claim), events, history, outbox, labels, writers);
    }

    /** What the processing of one partition reads and writes, of these stores. */
    public PartitionStore partition() {
        return PartitionStore.of(batches, events, history, labels);
    }

    public static CompilerStores on(DataSource ds) {
        return new CompilerStores(
                new BatchStore(ds),
                new EventLog(ds),
                new VersionHistory(ds),
                new Outbox(ds),
                new NodeLabelStore(ds),
                new PartitionWriters(ds));
    }
}
