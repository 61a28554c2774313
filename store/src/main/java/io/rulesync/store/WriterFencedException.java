package io.rulesync.store;

/**
 * Another compiler holds the partition now ({@link PartitionWriters}): it claimed it while this one was silent, or
 * Kafka gave it to another member. Nothing was written; unlike a plain {@link StaleWriteException}, reloading and
 * trying again would only fight the new writer, so the writer must stand down.
 */
public final class WriterFencedException extends StaleWriteException {
    private final PartitionWriters.Holder holder;

    public WriterFencedException(String message, PartitionWriters.Holder holder) {
        super(message);
        this.holder = holder;
    }

    /** Who holds the partition now (null: nobody, the row is gone). */
    public PartitionWriters.Holder holder() {
        return holder;
    }
}
