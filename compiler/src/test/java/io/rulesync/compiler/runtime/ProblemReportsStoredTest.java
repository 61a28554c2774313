package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.ProblemStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Problem reports through the real processor into PostgreSQL: the current problems per source replace
 * each other in {@code cluster_problem} (state), the events stay in the log (history), no version is
 * made of them, a restarted processor holds the same problems, and refused records are listed per
 * cluster with their reason.
 */
@RequiresPostgres
class ProblemReportsStoredTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private static final Clock CLOCK = Clock.fixed(T.plusSeconds(3600), ZoneOffset.UTC);
    private static final Problem PORT = new Problem(
            "shop/web.yaml (document 1)", "Service shop/bad", "spec.ports[0].port", "0 is out of range (1-65535)");
    private static final Problem YAML = new Problem("shop/new.yaml", "", "", "not valid YAML or JSON: ...");

    private long offset;
    private final Map<String, Integer> refused = new TreeMap<>();
    private int deadLettered;

    private final PartitionProcessor.Observer observer = new PartitionProcessor.Observer() {
        @Override
        public void refusedObjects(String cluster, int count) {
            refused.put(cluster, count);
        }

        @Override
        public void deadLettered(int count) {
            deadLettered += count;
        }
    };

    private PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                observer,
                PartitionProcessor.DEFAULT_RESYNC_COOLDOWN);
    }

    private List<PartitionProcessor.Record> batch(String... kv) {
        List<PartitionProcessor.Record> out = new ArrayList<>();
        for (int i = 0; i < kv.length; i += 2) {
            out.add(new PartitionProcessor.Record(offset++, kv[i], kv[i + 1]));
        }
        return out;
    }

    private static String report(String source, Instant at, Problem... problems) {
        return EventCodec.encode(ProblemsReported.of("a", source, List.of(problems), at));
    }

    private static List<String> stored(ProblemStore problems) {
        return problems.problems("a").stream()
                .map(p -> p.source() + " | " + p.object() + " | " + p.field() + " | " + p.reportedAt())
                .toList();
    }

    @Test
    void reportsAreCurrentStateNextToTheVersionsNeverAVersion() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            ProblemStore problems = new ProblemStore(db.dataSource());
            PartitionProcessor p = processor(store);
            p.process(batch(
                    "a",
                    ScriptedEvents.settings("a"),
                    "a",
                    ScriptedEvents.node("a", "n1", "10.1.0.1"),
                    "a",
                    report("shop/web.yaml", T, PORT),
                    "a",
                    report("shop/new.yaml", T, YAML)));
            long head = store.history().head("a");
            assertThat(stored(problems))
                    .containsExactly(
                            "shop/new.yaml |  |  | " + T,
                            "shop/web.yaml | Service shop/bad | spec.ports[0].port | " + T);
            assertThat(problems.refusedObjects()).containsExactly(Map.entry("a", 2));
            assertThat(refused).containsExactly(Map.entry("a", 2));
            assertThat(store.history().versions("a").get(0).cause())
                    .as("reports are not why a version exists")
                    .doesNotContain("problems")
                    .contains("\"events\":2");

            // The same problems again (a watcher restart): nothing changes, not even when they were reported.
            // Then new.yaml is fixed, and web.yaml gets a second problem: its rows are replaced.
            Problem ip = new Problem(
                    "shop/web.yaml (document 1)", "Service shop/bad", "spec.clusterIP", "'x' is not an IP address");
            p.process(batch("a", report("shop/web.yaml", T.plusSeconds(60), PORT)));
            p.process(batch(
                    "a",
                    report("shop/new.yaml", T.plusSeconds(120)),
                    "a",
                    report("shop/web.yaml", T.plusSeconds(120), PORT, ip)));
            assertThat(stored(problems))
                    .containsExactly(
                            "shop/web.yaml | Service shop/bad | spec.ports[0].port | " + T.plusSeconds(120),
                            "shop/web.yaml | Service shop/bad | spec.clusterIP | " + T.plusSeconds(120));
            assertThat(refused).containsExactly(Map.entry("a", 1));
            assertThat(store.history().head("a")).as("no version of reports").isEqualTo(head);
            assertThat(store.events().events("a", 0, null, null, null, null, 100))
                    .filteredOn(e -> e.type().equals("problems"))
                    .hasSize(5)
                    .allSatisfy(e -> assertThat(e.version()).isNull());

            // A restarted processor holds the same problems, and a sync drops the sources it does not list.
            PartitionProcessor restarted = processor(store);
            assertThat(restarted.heads().get("a").problems())
                    .isEqualTo(p.heads().get("a").problems());
            restarted.process(batch("a", EventCodec.encode(new ProblemSync("a", Set.of(), T.plusSeconds(180)))));
            assertThat(problems.problems("a")).isEmpty();
            assertThat(problems.refusedObjects()).isEmpty();
            assertThat(refused).containsExactly(Map.entry("a", 0));
            assertThat(store.history().head("a")).isEqualTo(head);
        }
    }

    @Test
    void aClusterKnownOnlyFromReportsAndDeadLettersIsKnown() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            ProblemStore problems = new ProblemStore(db.dataSource());
            PartitionProcessor p = processor(store);
            assertThat(problems.known("a")).isFalse();
            p.process(batch(
                    "a",
                    report("shop/web.yaml", T, PORT),
                    "a",
                    "{\"v\":1,\"cluster\":\"a\",\"type\":\"rename\"}",
                    "c",
                    "not json\nINFO forged"));
            assertThat(store.history().head("a")).isZero();
            assertThat(problems.known("a")).isTrue();
            assertThat(problems.known("c"))
                    .as("known from its dead letter alone")
                    .isTrue();
            assertThat(problems.known("b")).isFalse();
            assertThat(problems.problems("a")).hasSize(1);
            assertThat(problems.deadLetters("a", 10, 20)).singleElement().satisfies(d -> {
                assertThat(d.reason()).isEqualTo("observedAt: expected a string");
                assertThat(d.payloadStart()).isEqualTo("{\"v\":1,\"cluster\":\"a\"");
                assertThat(d.offset()).isEqualTo(1);
            });
            assertThat(problems.deadLetterCount("a")).isEqualTo(1);
            assertThat(deadLettered).isEqualTo(2);

            // A restart rebuilds the cluster from its stored reports.
            assertThat(processor(store).heads().get("a").problems().bySource()).containsOnlyKeys("shop/web.yaml");
        }
    }
}
