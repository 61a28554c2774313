package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.ack.NodeAck.Status;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class NodeStatusStoreTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private TestDatabase db;
    private NodeStatusStore store;

    @BeforeAll
    void setUp() {
        db = TestDatabase.create();
        store = new NodeStatusStore(db.dataSource());
    }

    @AfterAll
    void tearDown() {
        if (db != null) {
            db.close();
        }
    }

    static NodeAck applied(String cluster, String node, long version, int second) {
        return new NodeAck(
                cluster,
                node,
                version,
                version,
                Status.APPLIED,
                null,
                40 + second,
                100 + (int) version,
                "iptables",
                T.plusSeconds(second));
    }

    static NodeAck failed(String cluster, String node, long version, long running, String error, int second) {
        return new NodeAck(
                cluster,
                node,
                version,
                running,
                Status.FAILED,
                error,
                7,
                100 + (int) running,
                "iptables",
                T.plusSeconds(second));
    }

    private NodeStatus status(String cluster, String node) {
        return store.nodeStatus(cluster).stream()
                .filter(s -> s.node().equals(node))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void acksAreUpsertedPerNode() {
        store.recordAcks(List.of(applied("up", "n1", 1, 1), applied("up", "n2", 1, 1)));
        store.recordAcks(List.of(applied("up", "n1", 2, 2)));

        assertThat(store.nodeStatus("up"))
                .extracting(NodeStatus::node, NodeStatus::running, NodeStatus::lastVersion)
                .containsExactly(tuple("n1", 2L, 2L), tuple("n2", 1L, 1L));
        NodeStatus n1 = status("up", "n1");
        assertThat(n1.lastStatus()).isEqualTo(Status.APPLIED);
        assertThat(n1.failing()).isFalse();
        assertThat(n1.lastError()).isNull();
        assertThat(n1.lastErrorVersion()).isNull();
        assertThat(n1.lastErrorAt()).isNull();
        assertThat(n1.durationMs()).isEqualTo(42);
        assertThat(n1.ruleCount()).isEqualTo(102);
        assertThat(n1.mode()).isEqualTo("iptables");
        assertThat(n1.ackedAt()).isEqualTo(T.plusSeconds(2));
        assertThat(n1.updatedAt()).isNotNull();
        assertThat(store.nodeStatus("no-such-cluster")).isEmpty();
    }

    @Test
    void anOlderAckDoesNotOverwriteANewerOne() {
        store.recordAcks(List.of(applied("order", "n1", 5, 50)));
        store.recordAcks(List.of(applied("order", "n1", 4, 40), failed("order", "n1", 4, 3, "late", 45)));
        // The same ack again (a Kafka redelivery) changes nothing either.
        store.recordAcks(List.of(applied("order", "n1", 5, 50)));

        NodeStatus s = status("order", "n1");
        assertThat(s.running()).isEqualTo(5);
        assertThat(s.lastVersion()).isEqualTo(5);
        assertThat(s.ackedAt()).isEqualTo(T.plusSeconds(50));
        assertThat(s.lastError()).isNull();
    }

    @Test
    void withinOneBatchTheNewestAckWinsWhateverTheOrder() {
        store.recordAcks(
                List.of(applied("batch", "n1", 3, 30), applied("batch", "n1", 1, 10), applied("batch", "n1", 2, 20)));

        assertThat(status("batch", "n1").running()).isEqualTo(3);
        assertThat(store.nodeStatus("batch")).hasSize(1);
    }

    @Test
    void aFailureKeepsTheRunningVersionAndRecordsTheErrorUntilTheNodeApplies() {
        store.recordAcks(List.of(applied("fail", "n1", 3, 1)));
        Instant before = now();
        store.recordAcks(List.of(failed("fail", "n1", 4, 3, "iptables-restore: line 7 failed", 2)));
        Instant after = now();

        NodeStatus failing = status("fail", "n1");
        assertThat(failing.failing()).isTrue();
        assertThat(failing.lastStatus()).isEqualTo(Status.FAILED);
        assertThat(failing.running()).isEqualTo(3);
        assertThat(failing.lastVersion()).isEqualTo(4);
        assertThat(failing.lastError()).isEqualTo("iptables-restore: line 7 failed");
        assertThat(failing.lastErrorVersion()).isEqualTo(4);
        // When the api heard of it, not what the node's clock said.
        assertThat(failing.lastErrorAt()).isBetween(before, after);

        store.recordAcks(List.of(applied("fail", "n1", 5, 3)));

        NodeStatus recovered = status("fail", "n1");
        assertThat(recovered.failing()).isFalse();
        assertThat(recovered.running()).isEqualTo(5);
        assertThat(recovered.lastVersion()).isEqualTo(5);
        // The failure stays as history.
        assertThat(recovered.lastError()).isEqualTo("iptables-restore: line 7 failed");
        assertThat(recovered.lastErrorVersion()).isEqualTo(4);
        assertThat(recovered.lastErrorAt()).isEqualTo(failing.lastErrorAt());
    }

    @Test
    void aFailureFollowedBySuccessInOneBatchIsStillRecordedAsHistory() {
        store.recordAcks(List.of(applied("both", "n1", 1, 1)));
        store.recordAcks(List.of(failed("both", "n1", 2, 1, "bad chain", 2), applied("both", "n1", 3, 3)));

        NodeStatus s = status("both", "n1");
        assertThat(s.failing()).isFalse();
        assertThat(s.running()).isEqualTo(3);
        assertThat(s.lastError()).isEqualTo("bad chain");
        assertThat(s.lastErrorVersion()).isEqualTo(2);
        assertThat(s.lastErrorAt()).isNotNull();

        // A failure of an older version arriving late does not replace the history either.
        store.recordAcks(List.of(failed("both", "n1", 1, 1, "stale", 9)));
        assertThat(status("both", "n1").lastError()).isEqualTo("bad chain");
    }

    @Test
    void aForgedFutureAckDoesNotFreezeTheNode() {
        NodeAck future = new NodeAck(
                "future", "n1", 2, 1, Status.FAILED, "forged", 1, 1, "iptables", Instant.parse("9999-01-01T00:00:00Z"));
        store.recordAcks(List.of(applied("future", "n1", 1, 1), future));
        assertThat(status("future", "n1").failing()).isTrue();

        // The node's next ack, by an honest clock hours "earlier" than the forged one, is about a newer version: it
        // wins.
        store.recordAcks(List.of(applied("future", "n1", 3, 3)));

        NodeStatus s = status("future", "n1");
        assertThat(s.failing()).isFalse();
        assertThat(s.running()).isEqualTo(3);
        assertThat(s.ackedAt()).isEqualTo(T.plusSeconds(3));
    }

    @Test
    void aNodeWhoseClockIsBehindIsShownAsItAcks() {
        // A restarted agent re-acks the version it runs, with a clock a day behind its earlier ack: still the newest
        // word.
        store.recordAcks(List.of(failed("skew", "n1", 4, 4, "ipset: busy", 100)));
        Instant before = now();
        store.recordAcks(List.of(
                new NodeAck("skew", "n1", 4, 4, Status.APPLIED, null, 40, 104, "iptables", T.minusSeconds(86_400))));

        NodeStatus s = status("skew", "n1");
        assertThat(s.failing()).isFalse();
        assertThat(s.running()).isEqualTo(4);
        assertThat(s.ackedAt()).isEqualTo(T.minusSeconds(86_400));
        assertThat(s.updatedAt()).isAfterOrEqualTo(before);
    }

    private Instant now() {
        // The database's clock, which stamps what it stores.
        return new org.springframework.jdbc.core.JdbcTemplate(db.dataSource())
                .queryForObject("SELECT clock_timestamp()", java.sql.Timestamp.class)
                .toInstant();
    }
}
