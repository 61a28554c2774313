package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Outbox;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The compiler's processing against the real PostgreSQL: scripted events to versions and deltas,
 * replays that add nothing, and crashes at every point of every batch that, after a restart, leave
 * exactly the history of an uninterrupted run.
 */
@RequiresPostgres
class PartitionProcessorTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);

    private static PartitionProcessor processor(CompilerStores store, PartitionProcessor.Faults faults) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                faults,
                PartitionProcessor.VersionListener.NONE);
    }

    /** Delivers batches the way the Kafka listener does: from the processor's position on. */
    private static void deliver(PartitionProcessor p, List<List<PartitionProcessor.Record>> batches) {
        for (List<PartitionProcessor.Record> b : batches) {
            assertThat(p.process(b)).isEqualTo(PartitionProcessor.Outcome.DONE);
        }
    }

    /** Everything observable about the stored history: per version, its metadata and full rules. */
    private static List<String> history(CompilerStores store, String cluster) {
        List<String> out = new ArrayList<>();
        for (VersionHistory.VersionInfo v : store.history().versions(cluster)) {
            ClusterRules rules = store.history().rules(cluster, v.seq());
            out.add(v.seq() + " " + v.cause() + " " + v.settings() + " "
                    + rules.fragments().size() + " "
                    + rules.ruleSet("n1", IpFamily.IPV4).map(r -> r.render()).orElse("-"));
        }
        return out;
    }

    @Test
    void scriptedEventsBecomeVersionsDeltasAndDeadLetters() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store, PartitionProcessor.Faults.NONE);
            deliver(p, ScriptedEvents.batches());

            // a: v1 (first batch), v2 (endpoint added); batch 3 repeats n1: nothing; batch 4 adds db and its
            // sync marker removes it again: no net change, nothing; v3 (the slice is deleted).
            // b: v1 (settings), v2 (node), v3 (service api, no endpoints), v4 (api's endpoint).
            assertThat(store.history().versions("a"))
                    .extracting(VersionHistory.VersionInfo::seq)
                    .containsExactly(1L, 2L, 3L);
            assertThat(store.history().versions("b"))
                    .extracting(VersionHistory.VersionInfo::seq)
                    .containsExactly(1L, 2L, 3L, 4L);
            assertThat(store.history()
                            .rules("a", 2)
                            .ruleSet("n1", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .contains("--to-destination 10.244.0.2:8080");
            assertThat(store.history()
                            .rules("a", 3)
                            .ruleSet("n1", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .contains("\"shop/web:http has no endpoints\"")
                    .doesNotContain("10.244.0.2:8080");
            assertThat(store.history().versions("a").get(1).cause())
                    .contains("\"objects\":[\"EndpointSlice shop/web-1\"]");

            // Bad records are dead letters with their reason, and the partition went on.
            assertThat(db.count("dead_letter")).isEqualTo(2);
            List<Outbox.OutboxMessage> outbox = store.outbox().pending(100);
            assertThat(outbox)
                    .filteredOn(m -> m.topic().equals(Topics.DEFAULT.deadLetters()))
                    .extracting(Outbox.OutboxMessage::payload)
                    .anySatisfy(m -> assertThat(m).contains("not JSON"))
                    .anySatisfy(m -> assertThat(m).contains("record key 'b' is not the event's cluster 'a'"));

            // The deltas, applied in order, rebuild every stored version exactly.
            ClusterRules rules = ClusterRules.EMPTY;
            long seq = 0;
            for (Outbox.OutboxMessage m : outbox) {
                if (m.topic().equals(Topics.DEFAULT.deltas()) && m.key().equals("a")) {
                    RulesDelta d = RulesDelta.fromJson(m.payload());
                    assertThat(d.base()).isEqualTo(seq);
                    seq = d.target();
                    rules = d.diff().applyTo(rules);
                    assertThat(rules).isEqualTo(store.history().rules("a", seq));
                }
            }
            assertThat(seq).isEqualTo(3);

            // Replaying the same records adds nothing; the same facts at new offsets add no version.
            int events = (int) db.count("cluster_event");
            deliver(p, ScriptedEvents.batches());
            assertThat(db.count("cluster_event")).isEqualTo(events);
            // Re-sending facts that are already true (a watcher's resync after an outage) adds no version.
            PartitionProcessor restarted = processor(store, PartitionProcessor.Faults.NONE);
            long offset = restarted.position();
            deliver(
                    restarted,
                    List.of(List.of(
                            new PartitionProcessor.Record(offset, "a", ScriptedEvents.node("a", "n1", "10.1.0.1")),
                            new PartitionProcessor.Record(
                                    offset + 1, "a", ScriptedEvents.service("a", "web", "10.96.0.1")),
                            new PartitionProcessor.Record(
                                    offset + 2,
                                    "a",
                                    ScriptedEvents.sync(
                                            "a", io.rulesync.model.event.ObjectKind.SERVICE, "shop/web")))));
            assertThat(db.count("cluster_event")).isEqualTo(events + 3);
            assertThat(store.history().versions("a")).hasSize(3);
        }
    }

    @Test
    void aCrashAtAnyPointThenARestartGivesTheUninterruptedHistory() {
        List<List<PartitionProcessor.Record>> batches = ScriptedEvents.batches();
        List<String> expectedA;
        List<String> expectedB;
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            deliver(processor(store, PartitionProcessor.Faults.NONE), batches);
            expectedA = history(store, "a");
            expectedB = history(store, "b");
        }
        for (PartitionProcessor.Point point : PartitionProcessor.Point.values()) {
            for (int crashAt = 0; crashAt < batches.size(); crashAt++) {
                try (TestDatabase db = TestDatabase.create()) {
                    CompilerStores store = CompilerStores.on(db.dataSource());
                    int[] batch = {0};
                    int target = crashAt;
                    PartitionProcessor crashing = processor(store, at -> {
                        if (at == point && batch[0] == target) {
                            throw new IllegalStateException("simulated crash " + point + " in batch " + target);
                        }
                    });
                    List<List<PartitionProcessor.Record>> rest = new ArrayList<>();
                    for (int i = 0; i < batches.size(); i++) {
                        batch[0] = i;
                        List<PartitionProcessor.Record> b = batches.get(i);
                        if (i == crashAt) {
                            assertThatThrownBy(() -> crashing.process(b)).hasMessageContaining("simulated crash");
                            rest = batches.subList(i, batches.size());
                            break;
                        }
                        crashing.process(b);
                    }
                    // Restart: a new processor rebuilds from the database; Kafka redelivers from its position.
                    PartitionProcessor restarted = processor(store, PartitionProcessor.Faults.NONE);
                    long from = restarted.position();
                    List<List<PartitionProcessor.Record>> redelivered = new ArrayList<>();
                    for (List<PartitionProcessor.Record> b : rest) {
                        List<PartitionProcessor.Record> left =
                                b.stream().filter(r -> r.offset() >= from).toList();
                        if (!left.isEmpty()) {
                            redelivered.add(left);
                        }
                    }
                    deliver(restarted, redelivered);
                    assertThat(history(store, "a"))
                            .as("crash %s in batch %d", point, crashAt)
                            .isEqualTo(expectedA);
                    assertThat(history(store, "b"))
                            .as("crash %s in batch %d", point, crashAt)
                            .isEqualTo(expectedB);
                    assertThat(store.batches().positions("compiler", Topics.DEFAULT.events()))
                            .isEqualTo(Map.of(0, 15L));
                }
            }
        }
    }
}
