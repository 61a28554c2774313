package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.EventLog;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Checkpoints against the real PostgreSQL: written in the batch's transaction once a cluster has stored
 * enough events, used by a rebuild instead of the events they stand for, and, when one does not read back
 * as written, ignored with one line, replaced by the whole log, and written anew with the next batch.
 */
@RequiresPostgres
class CheckpointRebuildTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);
    /** Small, so that the scripted events cross it: cluster a stores 9 events (checkpoints after its 4th and 8th), b 4. */
    private static final int EVERY = 4;

    private static PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                Duration.ofMinutes(1),
                EVERY);
    }

    private static void deliver(PartitionProcessor p, List<List<PartitionProcessor.Record>> batches) {
        for (List<PartitionProcessor.Record> b : batches) {
            assertThat(p.process(b)).isEqualTo(PartitionProcessor.Outcome.DONE);
        }
    }

    private static long lastEventId(TestDatabase db, String cluster) {
        return new JdbcTemplate(db.dataSource())
                .queryForObject("SELECT max(id) FROM cluster_event WHERE cluster = ?", Long.class, cluster);
    }

    @Test
    void aRebuildFoldsTheCheckpointAndOnlyTheEventsAfterIt() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            deliver(p, ScriptedEvents.batches());
            Map<String, ClusterHead> heads = p.heads();

            // Written with the batch that crossed the interval, for the events stored up to that batch.
            EventLog.StoredCheckpoint a = store.events().checkpoint("a").orElseThrow();
            EventLog.StoredCheckpoint b = store.events().checkpoint("b").orElseThrow();
            // a's was written with batch 4 (its 8th event, version 2); batch 5 then made version 3.
            assertThat(a.versionSeq()).isEqualTo(2);
            assertThat(heads.get("a").version()).isEqualTo(3);
            assertThat(a.lastEventId()).isLessThan(lastEventId(db, "a"));
            assertThat(b.lastEventId()).isEqualTo(lastEventId(db, "b"));
            assertThat(b.objects()).isEqualTo(heads.get("b").view().state().objectCount());

            assertThat(processor(store).heads()).isEqualTo(heads);

            // Events a checkpoint stands for are not read again: garbling them changes nothing for a rebuild...
            int garbled = new JdbcTemplate(db.dataSource())
                    .update("UPDATE cluster_event SET payload = '{}' WHERE cluster = 'b' AND id <= ?", b.lastEventId());
            assertThat(garbled).isEqualTo(4);
            assertThat(processor(store).heads().get("b")).isEqualTo(heads.get("b"));
            // ...whereas without the checkpoint the rebuild reads them, refuses them, and b is empty.
            new JdbcTemplate(db.dataSource()).update("DELETE FROM cluster_checkpoint WHERE cluster = 'b'");
            assertThat(processor(store).heads().get("b").view().state().objectCount())
                    .isZero();
        }
    }

    /** The batch does not wait for its checkpoint: it is written afterwards, and a late one never replaces a newer one. */
    @Test
    void checkpointsAreWrittenAfterTheirBatchAndALateOneReplacesNothingNewer() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            java.util.List<Runnable> writes = new java.util.ArrayList<>();
            PartitionProcessor p = new PartitionProcessor(
                    store.partition(),
                    Topics.DEFAULT,
                    "compiler",
                    0,
                    CLOCK,
                    PartitionProcessor.Faults.NONE,
                    PartitionProcessor.VersionListener.NONE,
                    PartitionProcessor.Observer.NONE,
                    Duration.ofMinutes(1),
                    EVERY,
                    writes::add);
            deliver(p, ScriptedEvents.batches());
            assertThat(store.events().checkpoint("a"))
                    .as("committed, not yet written")
                    .isEmpty();
            assertThat(writes).hasSize(3); // a after batches 1 and 4, b after batch 5

            // The newest first, then the older one of a, late: it changes nothing.
            writes.get(1).run();
            long newest = store.events().checkpoint("a").orElseThrow().lastEventId();
            writes.get(0).run();
            assertThat(store.events().checkpoint("a").orElseThrow().lastEventId())
                    .isEqualTo(newest);
            writes.get(2).run();
            assertThat(processor(store).heads()).isEqualTo(p.heads());
        }
    }

    @Test
    void aCheckpointThatDoesNotReadBackIsIgnoredWithOneLineAndWrittenAnew() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            deliver(p, ScriptedEvents.batches());
            Map<String, ClusterHead> heads = p.heads();
            EventLog.StoredCheckpoint before = store.events().checkpoint("a").orElseThrow();
            // a's row now holds b's checkpoint: damaged, as far as a is concerned.
            new JdbcTemplate(db.dataSource())
                    .update(
                            "UPDATE cluster_checkpoint SET body = (SELECT body FROM cluster_checkpoint WHERE cluster = 'b') "
                                    + "WHERE cluster = 'a'");

            Logger logger = (Logger) LoggerFactory.getLogger(PartitionProcessor.class);
            ListAppender<ILoggingEvent> logs = new ListAppender<>();
            logs.start();
            logger.addAppender(logs);
            PartitionProcessor rebuilt;
            try {
                rebuilt = processor(store);
            } finally {
                logger.detachAppender(logs);
            }
            assertThat(rebuilt.heads()).isEqualTo(heads);
            assertThat(logs.list)
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .filteredOn(m -> m.contains("checkpoint"))
                    .containsExactly("cluster a: its checkpoint at event " + before.lastEventId()
                            + " (version 2) is not used: line 1 is of cluster b; rebuilt from the whole log instead, and a new checkpoint "
                            + "is written with its next batch");

            // The next batch of a writes a good checkpoint again, standing for every event of a so far.
            long offset = rebuilt.position();
            deliver(
                    rebuilt,
                    List.of(List.of(new PartitionProcessor.Record(
                            offset, "a", ScriptedEvents.service("a", "cache", "10.96.0.7")))));
            EventLog.StoredCheckpoint renewed = store.events().checkpoint("a").orElseThrow();
            assertThat(renewed.lastEventId()).isEqualTo(lastEventId(db, "a"));
            assertThat(processor(store).heads()).isEqualTo(rebuilt.heads());
        }
    }
}
