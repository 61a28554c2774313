package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * An event above the message limit, as its parts, against the real PostgreSQL: a sync marker of a
 * cluster of 50,000 Services (about 1.5 MB) arrives in parts across two batches with a restart in
 * between, and is folded once, whole; parts that do not fit together are dead letters with the reason.
 */
@RequiresPostgres
class LargeEventsTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);

    private static PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE);
    }

    /** Keys of 50,000 Services, among them shop/web but not shop/old. */
    private static SyncMarker marker() {
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < 50_000; i++) {
            keys.add("namespace-" + (i % 50) + "/service-" + i);
        }
        keys.add("shop/web");
        return new SyncMarker("a", ObjectKind.SERVICE, keys, CLOCK.instant());
    }

    private static List<PartitionProcessor.Record> records(long from, List<String> values) {
        List<PartitionProcessor.Record> out = new ArrayList<>();
        for (String v : values) {
            out.add(new PartitionProcessor.Record(from++, "a", v));
        }
        return out;
    }

    @Test
    void aSyncMarkerOfFiftyThousandServicesInPartsAcrossARestartIsFoldedOnceWhole() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            p.process(records(
                    0,
                    List.of(
                            ScriptedEvents.settings("a"),
                            ScriptedEvents.node("a", "n1", "10.1.0.1"),
                            ScriptedEvents.service("a", "web", "10.96.0.1"),
                            ScriptedEvents.service("a", "old", "10.96.0.2"))));
            assertThat(p.heads().get("a").view().state().services()).hasSize(2);

            String json = EventCodec.encode(marker());
            List<String> parts = EventParts.split("a", json, CLOCK.instant(), 400_000);
            assertThat(json.length()).isGreaterThan(1024 * 1024);
            assertThat(parts).hasSizeGreaterThanOrEqualTo(4);
            long at = p.position();
            p.process(records(at, parts.subList(0, 2)));
            assertThat(p.heads().get("a").view().state().services())
                    .as("nothing folded before the last part")
                    .hasSize(2);

            // A restart between the parts: the ones stored come back from the database.
            PartitionProcessor restarted = processor(store);
            restarted.process(records(at + 2, parts.subList(2, parts.size())));
            assertThat(restarted.heads().get("a").view().state().services())
                    .extracting(s -> s.name().toString())
                    .containsExactly("shop/web");
            assertThat(db.count("dead_letter")).isZero();
            // Stored: each part but the last as a part, and the whole marker at the last part's offset.
            assertThat(db.count("cluster_event")).isEqualTo(4 + parts.size());
            assertThat(store.events().eventPayloads("a")).last().isEqualTo(json);
            // And a rebuild folds the marker from its whole, not from the parts.
            assertThat(processor(store).heads().get("a"))
                    .isEqualTo(restarted.heads().get("a"));
        }
    }

    /** A batch of parts alone still counts towards the cluster's next checkpoint. */
    @Test
    void partsCountTowardsTheNextCheckpoint() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            List<String> parts = EventParts.split("a", EventCodec.encode(marker()), CLOCK.instant(), 400_000);
            int n = parts.size();
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
                    4 + n);
            p.process(records(
                    0,
                    List.of(
                            ScriptedEvents.settings("a"),
                            ScriptedEvents.node("a", "n1", "10.1.0.1"),
                            ScriptedEvents.service("a", "web", "10.96.0.1"),
                            ScriptedEvents.service("a", "old", "10.96.0.2"))));
            p.process(records(4, parts.subList(0, n - 1)));
            assertThat(store.events().checkpoint("a")).isEmpty();
            p.process(records(4 + n - 1, parts.subList(n - 1, n)));
            assertThat(store.events().checkpoint("a"))
                    .as("4 events and %d parts stored: the interval", n)
                    .isPresent();
        }
    }

    @Test
    void partsThatDoNotFitTogetherAreDeadLettersWithTheReason() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            List<String> parts = EventParts.split("a", EventCodec.encode(marker()), CLOCK.instant(), 400_000);
            // The second part alone, then parts 1 and 3 (2 is missing).
            p.process(records(0, List.of(parts.get(1))));
            p.process(records(1, List.of(parts.get(0), parts.get(2))));
            assertThat(db.count("dead_letter")).isEqualTo(2);
            assertThat(store.outbox().pending(100))
                    .extracting(m -> m.payload())
                    .anySatisfy(
                            m -> assertThat(m).contains("part 2 of event").contains("came without the parts before it"))
                    .anySatisfy(m ->
                            assertThat(m).contains("part 3 of event").contains("came without the parts before it"));
        }
    }
}
