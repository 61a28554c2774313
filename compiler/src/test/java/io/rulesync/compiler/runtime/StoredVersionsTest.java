package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.store.Batch;
import io.rulesync.store.Outbox;
import io.rulesync.store.StaleWriteException;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Compiled versions through the store and back: read back exactly, fenced against stale writers (was VersionStoreTest). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class StoredVersionsTest {
    private static final Instant T = Fixtures.T;
    private TestDatabase db;
    private CompilerStores store;

    @BeforeAll
    void setUp() {
        db = TestDatabase.create();
        store = CompilerStores.on(db.dataSource());
    }

    @AfterAll
    void tearDown() {
        if (db != null) {
            db.close();
        }
    }

    static ClusterEvent slice(String cluster, String... ips) {
        return Fixtures.upsert(cluster, Fixtures.slice("web", "n1", ips));
    }

    private static Batch batch(String topic, long expected, long next, ClusterHead.Step step, String cluster) {
        List<Batch.VersionRow> versions = step.newVersion()
                ? List.of(new Batch.VersionRow(cluster, step.next().version(), T, "{\"test\":true}", "{}", step.diff()))
                : List.of();
        return new Batch(
                "g",
                topic,
                0,
                expected,
                next,
                List.of(new Batch.EventRow(
                        cluster, expected < 0 ? 0 : expected, "upsert", "Service", "shop/web", "1", T, "{}", null)),
                List.of(),
                versions,
                List.of(),
                List.of(new Batch.OutboxRow(
                        "deltas", cluster, "{\"v\":" + step.next().version() + "}")));
    }

    @Test
    void versionsReadBackExactlyAndStorageGrowsWithTheChange() throws Exception {
        String c = "store-a";
        ClusterHead h0 = ClusterHead.empty(c);
        ClusterHead.Step s1 = h0.apply(List.of(
                Fixtures.upsert(c, Fixtures.node("n1", "10.1.0.1")),
                Fixtures.upsert(c, Fixtures.service("web", "10.96.0.1")),
                slice(c, "10.244.0.1", "10.244.0.2")));
        store.batches().commit(batch("t-a", -1, 3, s1, c));
        ClusterHead.Step s2 = s1.next().apply(List.of(slice(c, "10.244.0.1", "10.244.0.3")));
        store.batches().commit(batch("t-a", 3, 4, s2, c));

        assertThat(store.history().head(c)).isEqualTo(2);
        assertThat(store.history().rules(c, 1)).isEqualTo(s1.next().published());
        assertThat(store.history().rules(c, 2)).isEqualTo(s2.next().published());
        assertThat(store.history()
                        .rules(c, 2)
                        .ruleSet("n1", IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .contains("--to-destination 10.244.0.3:8080")
                .doesNotContain("10.244.0.2:8080");
        assertThat(store.batches().positions("g", "t-a")).containsEntry(0, 4L);
        assertThat(store.history().versions(c))
                .extracting(VersionHistory.VersionInfo::seq)
                .containsExactly(1L, 2L);
        assertThat(store.outbox().pending(10))
                .extracting(Outbox.OutboxMessage::payload)
                .contains("{\"v\":1}", "{\"v\":2}");
        // One endpoint changed: one entry, one new fragment; well under the 4 KB target.
        assertThat(s2.diff().fragments()).hasSize(1);
        assertThat(store.history().storedBytes(c, 2))
                .isLessThan(4096)
                .isLessThan(store.history().storedBytes(c, 1));
    }

    @Test
    void aStalePositionOrHeadWritesNothing() throws Exception {
        String c = "store-b";
        ClusterHead.Step s1 = ClusterHead.empty(c).apply(List.of(Fixtures.upsert(c, Fixtures.node("n1", "10.1.0.1"))));
        store.batches().commit(batch("t-b", -1, 1, s1, c));
        long events = db.count("cluster_event");

        // Another instance already moved this partition on: our batch from the old position is refused.
        ClusterHead.Step s2 = s1.next().apply(List.of(Fixtures.upsert(c, Fixtures.node("n2", "10.1.0.2"))));
        assertThatThrownBy(() -> store.batches().commit(batch("t-b", 0, 1, s2, c)))
                .isInstanceOf(StaleWriteException.class);
        // Two writers both extending version 1 (different partitions, say): only the first wins.
        store.batches().commit(batch("t-b2", -1, 1, s2, c));
        assertThatThrownBy(() -> store.batches().commit(batch("t-b3", -1, 1, s2, c)))
                .isInstanceOf(StaleWriteException.class);

        assertThat(store.history().head(c)).isEqualTo(2);
        assertThat(db.count("cluster_event")).isEqualTo(events + 1);
        assertThat(store.batches().positions("g", "t-b3")).isEmpty();
    }
}
