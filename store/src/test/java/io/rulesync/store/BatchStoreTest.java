package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The stores on their own, with versions that only move nodes (no compiler needed): what one batch
 * writes is read back by each store, and the outbox relay keeps what it could not publish. The round
 * trip of compiled rules is the compiler's StoredVersionsTest.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class BatchStoreTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private TestDatabase db;
    private BatchStore batches;
    private VersionHistory history;
    private EventLog events;
    private Outbox outbox;
    private ProblemStore problems;

    @BeforeAll
    void setUp() {
        db = TestDatabase.create();
        batches = new BatchStore(db.dataSource());
        history = new VersionHistory(db.dataSource());
        events = new EventLog(db.dataSource());
        outbox = new Outbox(db.dataSource());
        problems = new ProblemStore(db.dataSource());
    }

    @AfterAll
    void tearDown() {
        if (db != null) {
            db.close();
        }
    }

    private static Batch batch(String topic, long expected, long next, String cluster, long seq, String node) {
        RulesDiff diff = new RulesDiff(List.of(), List.of(new RulesDiff.NodeChange(node, null, "zone-a")));
        return new Batch(
                "g",
                topic,
                0,
                expected,
                next,
                List.of(new Batch.EventRow(
                        cluster,
                        Math.max(expected, 0),
                        "upsert",
                        "Node",
                        node,
                        "1",
                        T,
                        "{\"n\":\"" + node + "\"}",
                        seq)),
                List.of(new Batch.DeadLetterRow(Math.max(expected, 0), cluster, "not json", "unreadable")),
                List.of(new Batch.VersionRow(cluster, seq, T, "{}", "{}", diff)),
                List.of(),
                List.of(new Batch.OutboxRow("deltas", cluster, "{\"v\":" + seq + "}")));
    }

    @Test
    void aBatchIsReadBackByEachStoreAndAStaleOneWritesNothing() throws Exception {
        String c = "batch-a";
        batches.commit(batch("t-a", -1, 1, c, 1, "n1"));
        batches.commit(batch("t-a", 1, 2, c, 2, "n2"));
        long stored = db.count("cluster_event");

        assertThatThrownBy(() -> batches.commit(batch("t-a", 1, 2, c, 3, "n3")))
                .isInstanceOf(StaleWriteException.class);
        assertThatThrownBy(() -> batches.commit(batch("t-a2", -1, 1, c, 2, "n3")))
                .isInstanceOf(StaleWriteException.class);

        assertThat(db.count("cluster_event")).isEqualTo(stored);
        assertThat(batches.positions("g", "t-a")).containsExactly(Map.entry(0, 2L));
        assertThat(batches.positions("g", "t-a2")).isEmpty();
        assertThat(history.head(c)).isEqualTo(2);
        assertThat(history.heads()).containsEntry(c, 2L);
        assertThat(history.nodes(c, 1)).containsOnlyKeys("n1");
        assertThat(history.nodes(c, 2)).containsOnlyKeys("n1", "n2");
        assertThat(history.versionsBefore(c, 3, 10))
                .extracting(VersionHistory.VersionInfo::seq)
                .containsExactly(2L, 1L);
        assertThat(history.createdAt(c, List.of(1L, 2L, 9L))).containsOnlyKeys(1L, 2L);
        assertThat(events.clustersOn("t-a", 0)).containsExactly(c);
        assertThat(events.eventPayloads(c)).containsExactly("{\"n\":\"n1\"}", "{\"n\":\"n2\"}");
        assertThat(events.events(c, 0, null, "Node", null, "n2", 10))
                .extracting(EventLog.StoredEvent::version)
                .containsExactly(2L);
        assertThat(events.firstObserved(c, 2)).contains(T);
        assertThat(events.firstObserved(c, 9)).isEmpty();
        assertThat(problems.deadLetterCount(c)).isEqualTo(2);
        assertThat(problems.known(c)).isTrue();
    }

    @Test
    void aDeadLetterHoldingANulIsStoredWithItEscaped() throws Exception {
        // A record with a raw NUL is not JSON, so it is a dead letter; PostgreSQL's text refuses the NUL itself.
        batches.commit(new Batch(
                "g",
                "t-nul",
                0,
                -1,
                1,
                List.of(),
                List.of(new Batch.DeadLetterRow(0, "c\0", "{\0}", "not JSON")),
                List.of(),
                List.of(),
                List.of(),
                0,
                List.of()));
        assertThat(JdbcClient.create(db.dataSource())
                        .sql("SELECT record_key || ' ' || payload FROM dead_letter WHERE topic = 't-nul'")
                        .query(String.class)
                        .single())
                .isEqualTo("c\\u0000 {\\u0000}");
    }

    private static RuleFragment fragment(String service, int generation) {
        return new RuleFragment(
                Map.of(
                        DispatchChain.NAT_SERVICES,
                        List.of("-m comment --comment \"" + service + " g" + generation + "\" -j KUBE-SVC-"
                                + service.toUpperCase())),
                List.of(),
                List.of());
    }

    private static FragmentKey key(String service) {
        return new FragmentKey(IpFamily.IPV4, Unit.parse("shop/" + service + ":http/TCP"), Variant.ALL);
    }

    /** Version {@code seq} of {@code cluster}: these fragments set (null: removed), from the previous version's. */
    private void version(String cluster, long seq, Map<String, RuleFragment> before, Map<String, RuleFragment> after)
            throws Exception {
        List<RulesDiff.FragmentChange> changes = new ArrayList<>();
        new TreeSet<>(after.keySet())
                .forEach(svc -> changes.add(new RulesDiff.FragmentChange(key(svc), before.get(svc), after.get(svc))));
        long position = batches.position("g", "t-h", 0).map(LogPosition::next).orElse(-1L);
        batches.commit(new Batch(
                "g",
                "t-h",
                0,
                position,
                Math.max(position, 0) + 1,
                List.of(),
                List.of(),
                List.of(new Batch.VersionRow(cluster, seq, T, "{}", "{}", new RulesDiff(changes, List.of()))),
                List.of(),
                List.of()));
    }

    /**
     * A committed version is announced to listeners (the api's long polls wake on it), and what each version changed
     * reads back as the delta the compiler published: sets with their text, removals, in version order.
     */
    @Test
    void aNewVersionIsAnnouncedAtCommitAndReadsBackAsItsDelta() throws Exception {
        String c = "announced";
        try (Notifications changes = new Notifications(db.dataSource(), Notifications.HEADS)) {
            assertThat(changes.await(Duration.ofMillis(100)))
                    .as("nothing committed yet")
                    .isFalse();
            version(c, 1, Map.of(), Map.of("a", fragment("a", 1), "b", fragment("b", 1)));
            assertThat(changes.await(Duration.ofSeconds(30))).isTrue();
            Map<String, RuleFragment> removedB = new java.util.HashMap<>();
            removedB.put("a", fragment("a", 2));
            removedB.put("b", null);
            version(c, 2, Map.of("a", fragment("a", 1), "b", fragment("b", 1)), removedB);
            assertThat(changes.await(Duration.ofSeconds(30))).isTrue();
        }
        List<RulesDelta> deltas = history.deltas(c, 0, 2);
        assertThat(deltas)
                .extracting(RulesDelta::base, RulesDelta::target)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(0L, 1L), org.assertj.core.groups.Tuple.tuple(1L, 2L));
        RulesDiff second = deltas.get(1).diff();
        assertThat(second.fragments()).extracting(RulesDiff.FragmentChange::key).containsExactly(key("a"), key("b"));
        assertThat(second.fragments().get(0).after()).isEqualTo(fragment("a", 2));
        assertThat(second.fragments().get(1).after()).as("removed").isNull();
        assertThat(second.applyTo(history.rules(c, 1))).isEqualTo(history.rules(c, 2));
        // Each delta names the lineage it follows and the one it makes, as stored.
        String one = history.lineage(c, 1).orElseThrow();
        assertThat(deltas)
                .extracting(RulesDelta::baseLineage, RulesDelta::lineage)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Lineage.UNKNOWN, one),
                        org.assertj.core.groups.Tuple.tuple(
                                one, history.lineage(c, 2).orElseThrow()));
        assertThat(history.lineage(c, 3)).isEmpty();
        assertThat(history.deltas(c, 2, 2)).isEmpty();
        assertThat(history.deltas(c, 5, 9)).as("after the head").isEmpty();
    }

    /**
     * The head's entries follow every version (set, replaced, removed), so reading the head gives what the latest
     * entry of each key gives; and V6 fills them in for histories stored before it.
     */
    @Test
    void theHeadsEntriesAreTheLatestEntryOfEachKeyAndV6FillsThemInForOlderHistories() throws Exception {
        String c = "heads";
        Map<String, RuleFragment> none = new HashMap<>();
        Map<String, RuleFragment> v1 = new HashMap<>(Map.of("web", fragment("web", 1), "api", fragment("api", 1)));
        version(c, 1, none, v1);
        Map<String, RuleFragment> v2 = new HashMap<>(Map.of("web", fragment("web", 2), "db", fragment("db", 1)));
        v2.put("api", null);
        version(c, 2, v1, v2);
        ClusterRules head = history.rules(c, 2);
        assertThat(head.fragments()).containsOnlyKeys(key("web"), key("db"));
        assertThat(head.fragment(key("web"))).contains(fragment("web", 2));
        assertThat(history.rules(c, 1).fragments()).containsOnlyKeys(key("web"), key("api"));

        // Version 3 changes nothing of these: version 2, read now from the whole history, is what its head entries
        // said.
        Map<String, RuleFragment> v3 = new HashMap<>(Map.of("cache", fragment("cache", 1)));
        version(c, 3, none, v3);
        assertThat(history.rules(c, 2).fragments()).isEqualTo(head.fragments());
        ClusterRules head3 = history.rules(c, 3);
        assertThat(head3.fragments()).containsOnlyKeys(key("web"), key("db"), key("cache"));

        // As if the database predated V6 (and so the later ones): the migrations fill the head's entries in from the
        // history.
        try (Connection conn = db.dataSource().getConnection();
                Statement st = conn.createStatement()) {
            st.execute(
                    "DROP TABLE cluster_retention; DROP INDEX version_entry_by_hash; DROP INDEX version_by_created; "
                            + "ALTER TABLE version ADD CONSTRAINT version_cluster_parent_seq_fkey FOREIGN KEY (cluster, parent_seq) "
                            + "REFERENCES version (cluster, seq); "
                            + "DROP TABLE cluster_head_entry; DROP TABLE cluster_checkpoint; DROP TABLE rollout_policy, rollout, rollout_log; "
                            + "DROP TABLE cluster_node_label; DROP TABLE partition_writer; ALTER TABLE version DROP COLUMN lineage; "
                            + "DROP TRIGGER outbox_inserted ON outbox; DROP FUNCTION outbox_inserted(); "
                            + "DROP TABLE notification, webhook_cursor, webhook_failure; "
                            + "DROP FUNCTION notify_rollout(), notify_node_failed(), notify_problems() CASCADE; "
                            + "DELETE FROM flyway_schema_history WHERE version IN ('6', '7', '8', '9', '10', '11', '12', '13')");
        }
        Flyway.configure().dataSource(db.dataSource()).load().migrate();
        assertThat(history.rules(c, 3)).isEqualTo(head3);
        assertThat(db.count("cluster_head_entry")).isGreaterThanOrEqualTo(3);
        // Versions from before lineages get one each: distinct, and in the form a node's agent checks.
        assertThat(history.versions(c))
                .extracting(VersionHistory.VersionInfo::lineage)
                .doesNotHaveDuplicates()
                .allSatisfy(l -> assertThat(Lineage.check("lineage", l)).isEqualTo(l));
    }

    /**
     * Retention removes a fragment body nothing refers to any more, while a writer may have just found that body stored
     * (and so not inserted it) and be about to refer to it. Writers hold the fragment lock shared from then to their
     * commit; the pass takes it exclusively before it removes bodies, so it waits, and then sees the new reference.
     */
    @Test
    void retentionWaitsForAWriterThatFoundABodyStoredBeforeItRemovesBodies() throws Exception {
        String c = "race";
        RuleFragment old = fragment("race", 1);
        version(c, 1, new HashMap<>(), new HashMap<>(Map.of("race", old)));
        version(c, 2, new HashMap<>(Map.of("race", old)), new HashMap<>(Map.of("race", fragment("race", 2))));
        HistoryPruning pruning = new HistoryPruning(db.dataSource());
        java.util.concurrent.ExecutorService pass = java.util.concurrent.Executors.newSingleThreadExecutor();
        try (Connection writer = db.dataSource().getConnection()) {
            writer.setAutoCommit(false);
            try (Statement st = writer.createStatement()) {
                // What BatchStore.commit does before it stores a version: the lock, then the bodies (this one is
                // stored).
                st.execute("SELECT pg_advisory_xact_lock_shared(" + HistoryPruning.RULESYNC + ", "
                        + HistoryPruning.FRAGMENTS + ")");
                assertThat(st.executeUpdate("INSERT INTO fragment (hash, body, text_length) VALUES ('" + old.hash()
                                + "', '\\x00', 1) " + "ON CONFLICT DO NOTHING"))
                        .isZero();
            }
            // Version 1 goes, and with it the last reference to the old body: the pass must wait for the writer.
            java.util.concurrent.Future<HistoryPruning.Pruned> pruned =
                    pass.submit(() -> pruning.prune(c, 2, 0, 100, 100, T));
            Thread.sleep(1000);
            assertThat(pruned).as("the pass waits for the writer's commit").isNotDone();
            try (Statement st = writer.createStatement()) {
                st.execute(
                        "INSERT INTO cluster_head_entry (cluster, family, unit, variant, hash, seq) VALUES ('race-2', 'ipv4', "
                                + "'shop/race:http/TCP', '*', '" + old.hash() + "', 1)");
            }
            writer.commit();
            assertThat(pruned.get(30, java.util.concurrent.TimeUnit.SECONDS).versions())
                    .isEqualTo(1);
        } finally {
            pass.shutdownNow();
        }
        assertThat(history.fragments(List.of(old.hash()))).containsOnlyKeys(old.hash());
        assertThat(history.oldest(c)).isEqualTo(2);
    }

    @Test
    void aMovedPositionIsFencedAndTheOutboxKeepsWhatItCouldNotPublish() throws Exception {
        LogPosition first = new LogPosition(5, 1, null, 0, 5);
        batches.movePosition(
                "g", "t-b", 0, Optional.empty(), first, List.of(new Batch.OutboxRow("resync", "batch-b", "{}")));
        assertThat(batches.position("g", "t-b", 0)).contains(first);
        assertThatThrownBy(() -> batches.movePosition("g", "t-b", 0, Optional.empty(), first, List.of()))
                .isInstanceOf(StaleWriteException.class);

        int pending = outbox.pending(1000).size();
        assertThat(outbox.relay(1000, messages -> false)).isZero();
        assertThat(outbox.pending(1000)).hasSize(pending);
        List<Outbox.OutboxMessage> published = new ArrayList<>();
        assertThat(outbox.relay(1000, published::addAll)).isEqualTo(pending);
        assertThat(published).extracting(Outbox.OutboxMessage::payload).contains("{}");
        assertThat(outbox.pending(1000)).isEmpty();
    }
}
