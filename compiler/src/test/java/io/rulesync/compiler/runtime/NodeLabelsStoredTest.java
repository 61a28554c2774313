package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Node labels through the real processor into PostgreSQL ({@code cluster_node_label}), where staged rollout's label
 * selectors read them: written with the batch that changed them, a change of labels alone makes no version, a node that
 * leaves loses its row, and a processor that takes the partition puts right a table that disagrees with the events.
 */
@RequiresPostgres
class NodeLabelsStoredTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T13:00:00Z"), ZoneOffset.UTC);
    private long offset;

    private PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                PartitionProcessor.DEFAULT_RESYNC_COOLDOWN);
    }

    private List<PartitionProcessor.Record> batch(String... values) {
        List<PartitionProcessor.Record> out = new ArrayList<>();
        for (String v : values) {
            out.add(new PartitionProcessor.Record(offset++, "a", v));
        }
        return out;
    }

    private static String node(String name, String ip, String labels) {
        return ScriptedEvents.up(
                "a",
                "kind: Node\nmetadata: {name: " + name + ", labels: {" + labels + "}}\n"
                        + "status: {addresses: [{type: InternalIP, address: " + ip + "}]}\n");
    }

    @Test
    void labelsAreTheNodesStateWrittenWithTheBatchAndPutRightOnTakingThePartition() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            p.process(batch(
                    ScriptedEvents.settings("a"),
                    node("n1", "10.1.0.1", "pool: a, kubernetes.io/os: linux"),
                    node("n2", "10.1.0.2", "")));
            assertThat(store.labels().labels("a"))
                    .containsExactly(
                            Map.entry("n1", Map.of("kubernetes.io/os", "linux", "pool", "a")),
                            Map.entry("n2", Map.of()));
            long head = store.history().head("a");
            assertThat(head).isPositive();

            // A new pool for n1 changes no rule: its row changes, and no version is made.
            p.process(batch(node("n1", "10.1.0.1", "pool: b, kubernetes.io/os: linux")));
            assertThat(store.labels().labels("a").get("n1")).containsEntry("pool", "b");
            assertThat(store.history().head("a"))
                    .as("labels alone make no version")
                    .isEqualTo(head);

            // A zone is a label the rules read: n2's new zone makes a version, and its row has the zone.
            p.process(batch(node("n2", "10.1.0.2", "topology.kubernetes.io/zone: z1")));
            assertThat(store.history().head("a")).isEqualTo(head + 1);
            assertThat(store.labels().labels("a").get("n2")).isEqualTo(Map.of("topology.kubernetes.io/zone", "z1"));

            // n1 leaves (deleted), then a sync that lists only n2: the rows follow.
            p.process(batch(
                    ScriptedEvents.deleted("a", ObjectKind.NODE, "n1"),
                    ScriptedEvents.sync("a", ObjectKind.NODE, "n2")));
            assertThat(store.labels().labels("a")).containsOnlyKeys("n2");

            // A table that disagrees with the stored events (stored before labels were, or written by hand) is put
            // right by
            // the processor that takes the partition next.
            JdbcClient sql = JdbcClient.create(db.dataSource());
            sql.sql("UPDATE cluster_node_label SET labels = '{\"pool\": \"forged\"}' WHERE cluster = 'a'")
                    .update();
            sql.sql("INSERT INTO cluster_node_label VALUES ('a', 'ghost', '{}')")
                    .update();
            processor(store);
            assertThat(store.labels().labels("a"))
                    .containsExactly(Map.entry("n2", Map.of("topology.kubernetes.io/zone", "z1")));
            assertThat(store.labels().reconcile("a", Map.of("n2", Map.of("topology.kubernetes.io/zone", "z1"))))
                    .as("nothing left to put right")
                    .isZero();
        }
    }
}
