package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.topic.LogPosition;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Who writes a partition: claims, the fence every commit passes, and a takeover from another consumer group. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class PartitionWritersTest {
    private static final Duration LEASE = Duration.ofMinutes(1);
    private TestDatabase db;
    private PartitionWriters writers;
    private BatchStore batches;

    @BeforeAll
    void setUp() {
        db = TestDatabase.create();
        writers = new PartitionWriters(db.dataSource());
        batches = new BatchStore(db.dataSource());
    }

    @AfterAll
    void tearDown() {
        db.close();
    }

    private PartitionWriters.Claim granted(PartitionWriters.Outcome o) {
        assertThat(o).isInstanceOf(PartitionWriters.Outcome.Granted.class);
        return ((PartitionWriters.Outcome.Granted) o).claim();
    }

    private static Batch empty(String group, String topic, long expected, long next) {
        return new Batch(
                group, topic, 0, expected, next, List.of(), List.of(), List.of(), List.of(), List.of(), 0, List.of());
    }

    @Test
    void aMemberOfTheSameGroupTakesAtOnceAndTheOldClaimCommitsNothing() throws Exception {
        PartitionWriters.Claim a = granted(writers.claim("t-same", 0, "g", "a", LEASE, true));
        assertThat(a.epoch()).isEqualTo(1);
        batches.fencedBy(a).commit(empty("g", "t-same", -1, 5));

        PartitionWriters.Claim b = granted(writers.claim("t-same", 0, "g", "b", LEASE, true));
        assertThat(b.epoch()).isEqualTo(2);
        assertThatThrownBy(() -> batches.fencedBy(a).commit(empty("g", "t-same", 5, 6)))
                .isInstanceOf(WriterFencedException.class)
                .hasMessageStartingWith(
                        "t-same/0 is no longer written by a (epoch 1): compiler b of consumer group 'g' (epoch 2, "
                                + "heard from ")
                .hasMessageEndingWith(" ms ago) holds it");
        assertThatThrownBy(() -> batches.fencedBy(a)
                        .movePosition(
                                "g",
                                "t-same",
                                0,
                                batches.position("g", "t-same", 0),
                                new LogPosition(9, 0, null, 0, 9),
                                List.of()))
                .isInstanceOf(WriterFencedException.class);
        assertThat(batches.position("g", "t-same", 0).orElseThrow().next())
                .as("nothing moved by the old claim")
                .isEqualTo(5);
        batches.fencedBy(b).commit(empty("g", "t-same", 5, 6));
        // Standing by, the old one does not take it back while the new one is heard from.
        assertThat(writers.claim("t-same", 0, "g", "a", LEASE, false))
                .isInstanceOf(PartitionWriters.Outcome.Refused.class);
    }

    @Test
    void anotherGroupIsRefusedWhileTheWriterIsHeardFromAndTakesItsPositionOnceItIsSilent() throws Exception {
        PartitionWriters.Claim a = granted(writers.claim("t-other", 0, "g1", "a", LEASE, true));
        batches.fencedBy(a).commit(empty("g1", "t-other", -1, 40));

        PartitionWriters.Outcome refused = writers.claim("t-other", 0, "g2", "b", LEASE, true);
        assertThat(refused).isInstanceOf(PartitionWriters.Outcome.Refused.class);
        assertThat(((PartitionWriters.Outcome.Refused) refused).holder().writer())
                .isEqualTo("a");
        assertThat(writers.renew("t-other", "a", Map.of(0, a.epoch()))).isEmpty();

        // Silent for longer than a lease of a second: taken, with the position g1 reached.
        Thread.sleep(1100); // deliberate: the database's clock must pass the lease
        PartitionWriters.Claim b = granted(writers.claim("t-other", 0, "g2", "b", Duration.ofSeconds(1), false));
        assertThat(batches.position("g2", "t-other", 0)).map(LogPosition::next).isEqualTo(Optional.of(40L));
        batches.fencedBy(b).commit(empty("g2", "t-other", 40, 41));
        assertThat(writers.renew("t-other", "a", Map.of(0, a.epoch()))).containsOnlyKeys(0);
        assertThatThrownBy(() -> batches.fencedBy(a).commit(empty("g1", "t-other", 40, 41)))
                .isInstanceOf(WriterFencedException.class);
    }

    @Test
    void aReleasedClaimIsTakenAtOnce() {
        granted(writers.claim("t-release", 0, "g1", "a", LEASE, true));
        writers.release("t-release", "a");
        assertThat(granted(writers.claim("t-release", 0, "g2", "b", LEASE, false))
                        .epoch())
                .isEqualTo(2);
    }
}
