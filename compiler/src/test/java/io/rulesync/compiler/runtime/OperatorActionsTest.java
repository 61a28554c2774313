package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.ActionConflictException;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.Outbox;
import io.rulesync.store.RecordedAction;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rollback and resume through the real store and processor: the api's request (a pending row and an
 * outbox message on the events topic), the compiler carrying it out in order with watched changes,
 * and the audit row completed in the same transaction as the version.
 */
@RequiresPostgres
class OperatorActionsTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);

    /** What the outbox relay would publish to the events topic, delivered as the partition's next record. */
    private static void relayRequests(CompilerStores store, PartitionProcessor p) {
        List<Outbox.OutboxMessage> requests = store.outbox().pending(1000).stream()
                .filter(m -> m.topic().equals(Topics.DEFAULT.events()))
                .toList();
        long offset = p.position();
        for (Outbox.OutboxMessage m : requests) {
            assertThat(p.process(List.of(new PartitionProcessor.Record(offset++, m.key(), m.payload()))))
                    .isEqualTo(PartitionProcessor.Outcome.DONE);
        }
        store.outbox().relay(1000, batch -> true);
    }

    private static void watched(PartitionProcessor p, String value) {
        p.process(List.of(new PartitionProcessor.Record(p.position(), "a", value)));
    }

    @Test
    void rollbackPinsResumeUnpinsAndTheAuditLogSaysWhoAndWhy() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            OperatorActionStore actions = new OperatorActionStore(db.dataSource());
            PartitionProcessor p = new PartitionProcessor(
                    store.partition(),
                    Topics.DEFAULT,
                    "compiler",
                    0,
                    CLOCK,
                    PartitionProcessor.Faults.NONE,
                    PartitionProcessor.VersionListener.NONE);
            for (List<PartitionProcessor.Record> b : ScriptedEvents.batches()) {
                p.process(b);
            }
            store.outbox().relay(1000, batch -> true);
            assertThat(store.history().head("a")).isEqualTo(3);

            long id = actions.request(
                    "a", 1L, "alice", "endpoint change broke checkout", CLOCK.instant(), Topics.DEFAULT.events());
            // A second request while the first is pending is refused, naming the pending one.
            assertThatThrownBy(
                            () -> actions.request("a", 2L, "bob", "me too", CLOCK.instant(), Topics.DEFAULT.events()))
                    .isInstanceOf(ActionConflictException.class)
                    .hasMessageContaining("action " + id + " of cluster a is still pending");
            relayRequests(store, p);

            RecordedAction done = actions.find(id).orElseThrow();
            assertThat(done.status()).isEqualTo("done");
            assertThat(done.resultVersion()).isEqualTo(4L);
            assertThat(store.history().head("a")).isEqualTo(4);
            assertThat(store.history().rules("a", 4)).isEqualTo(store.history().rules("a", 1));
            assertThat(store.history().version("a", 4).orElseThrow().cause())
                    .contains("\"operatorActions\":[{\"id\":" + id
                            + ",\"action\":\"rollback\",\"toVersion\":1,\"actor\":\"alice\","
                            + "\"reason\":\"endpoint change broke checkout\"}]");
            assertThat(store.history().pinning("a")).map(RecordedAction::id).contains(id);

            // Pinned: a watched change is recorded but makes no version...
            watched(p, ScriptedEvents.slice("a", "web", "10.244.0.7"));
            assertThat(store.history().head("a")).isEqualTo(4);
            // ...and a restarted compiler is still pinned.
            p = new PartitionProcessor(
                    store.partition(),
                    Topics.DEFAULT,
                    "compiler",
                    0,
                    CLOCK,
                    PartitionProcessor.Faults.NONE,
                    PartitionProcessor.VersionListener.NONE);
            watched(p, ScriptedEvents.slice("a", "web", "10.244.0.8"));
            assertThat(store.history().head("a")).isEqualTo(4);

            long resume = actions.request("a", null, "bob", "fixed upstream", CLOCK.instant(), Topics.DEFAULT.events());
            relayRequests(store, p);
            assertThat(actions.find(resume).orElseThrow().resultVersion()).isEqualTo(5L);
            assertThat(store.history().pinning("a")).isEmpty();
            assertThat(store.history()
                            .rules("a", 5)
                            .ruleSet("n1", io.rulesync.model.cluster.IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .contains("--to-destination 10.244.0.8:8080");

            // A resume of an unpinned cluster is refused, with the reason in the audit log.
            long again = actions.request("a", null, "bob", "twice", CLOCK.instant(), Topics.DEFAULT.events());
            relayRequests(store, p);
            assertThat(actions.find(again).orElseThrow()).satisfies(a -> {
                assertThat(a.status()).isEqualTo("rejected");
                assertThat(a.outcome()).isEqualTo("the cluster is not pinned: there is nothing to resume");
            });
            assertThat(store.history().head("a")).isEqualTo(5);
            assertThat(actions.list("a", Long.MAX_VALUE, 10))
                    .extracting(RecordedAction::id)
                    .containsExactly(again, resume, id);

            // The relay publishes at least once: the same request delivered twice, in one batch and in a later one,
            // is carried out once; the repeats are dead letters.
            long twice = actions.request("a", 1L, "alice", "again", CLOCK.instant(), Topics.DEFAULT.events());
            String request = store.outbox().pending(1000).stream()
                    .filter(m -> m.topic().equals(Topics.DEFAULT.events()))
                    .findFirst()
                    .orElseThrow()
                    .payload();
            long deadBeforeRepeat = db.count("dead_letter");
            p.process(List.of(
                    new PartitionProcessor.Record(p.position(), "a", request),
                    new PartitionProcessor.Record(p.position() + 1, "a", request)));
            watched(p, request);
            store.outbox().relay(1000, batch -> true);
            assertThat(actions.find(twice).orElseThrow().resultVersion()).isEqualTo(6L);
            assertThat(store.history().head("a")).isEqualTo(6);
            assertThat(db.count("dead_letter")).isEqualTo(deadBeforeRepeat + 2);
            assertThat(deadLetterReasons(db))
                    .anySatisfy(r -> assertThat(r).contains("was delivered twice in one batch"))
                    .anySatisfy(r ->
                            assertThat(r).contains("is done in operator_action, not pending (already carried out)"));
            long resumeAfterTwice =
                    actions.request("a", null, "bob", "unpin", CLOCK.instant(), Topics.DEFAULT.events());
            relayRequests(store, p);
            assertThat(actions.find(resumeAfterTwice).orElseThrow().resultVersion())
                    .isEqualTo(7L);

            // Something on the topic that claims to be an action the api never recorded is a dead letter.
            long deadBefore = db.count("dead_letter");
            watched(p, EventCodec.encode(new RollbackRequested("a", 999, 1, "mallory", "forged", CLOCK.instant())));
            assertThat(db.count("dead_letter")).isEqualTo(deadBefore + 1);
            assertThat(deadLetterReasons(db))
                    .anySatisfy(r -> assertThat(r)
                            .contains("operator action 999 of cluster a is not in "
                                    + "operator_action (the api never recorded it)"));
            assertThat(store.history().head("a")).isEqualTo(7);
        }
    }

    private static List<String> deadLetterReasons(TestDatabase db) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT reason FROM dead_letter ORDER BY id")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
