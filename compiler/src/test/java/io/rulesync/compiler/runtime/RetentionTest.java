package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.compiler.retention.RetentionPolicy;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.HistoryPruning;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Retention against the real PostgreSQL and the real write path: a cluster's history of 60 versions (endpoints moving,
 * a Service and a node coming and going), cut to what the policy keeps. Every kept version must read back exactly as
 * before, nothing kept may be held back by what was removed, and a rebuild must not notice.
 */
@RequiresPostgres
class RetentionTest {
    private static final String C = "keep";
    private static final int SERVICES = 20;
    /** Small, so that checkpoints fall inside the history: retention may remove only the events one stands for. */
    private static final int EVERY = 25;

    private static final Instant START = Instant.parse("2026-10-01T00:00:00Z");

    /** Moved one minute per batch, so versions have distinct creation times. */
    private final MutableClock clock = new MutableClock(START);

    private PartitionProcessor processor(CompilerStores store) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                clock,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                Duration.ofMinutes(1),
                EVERY);
    }

    private RetentionSweep sweep(TestDatabase db, RetentionPolicy policy) {
        CompilerStores store = CompilerStores.on(db.dataSource());
        return new RetentionSweep(
                new HistoryPruning(db.dataSource()),
                store.history(),
                store.events(),
                policy,
                clock,
                new CompilerMetrics(new SimpleMeterRegistry()),
                10_000,
                100_000,
                null);
    }

    private static String up(ClusterObject o) {
        return EventCodec.encode(new ObjectUpserted(C, o, "1", START));
    }

    /** Delivers each batch of events (JSON) at the next offsets, a minute apart. */
    private void deliver(PartitionProcessor p, List<List<String>> batches) {
        for (List<String> batch : batches) {
            List<PartitionProcessor.Record> records = new ArrayList<>();
            for (String e : batch) {
                records.add(new PartitionProcessor.Record(p.position() + records.size(), C, e));
            }
            assertThat(p.process(records)).isEqualTo(PartitionProcessor.Outcome.DONE);
            clock.advance(Duration.ofMinutes(1));
        }
    }

    /** 60 batches, each a version: endpoints moving, a Service coming and going, a node joining and one leaving. */
    private static List<List<String>> history() {
        List<List<String>> batches = new ArrayList<>();
        ClusterState s = SyntheticCluster.build(SERVICES, 2);
        List<String> first =
                new ArrayList<>(List.of(EventCodec.encode(new SettingsChanged(C, ClusterSettings.DEFAULT, START))));
        s.nodes().forEach(n -> first.add(up(n)));
        s.services().forEach(x -> first.add(up(x)));
        s.endpointSlices().forEach(x -> first.add(up(x)));
        batches.add(first);
        for (int i = 1; i < 60; i++) {
            List<String> b = new ArrayList<>(List.of(up(SyntheticCluster.slice(i % 4, 2, i))));
            if (i == 10) {
                b.add(up(SyntheticCluster.node(3)));
            } else if (i == 20) {
                b.add(EventCodec.encode(new ObjectDeleted(C, new ObjectRef(ObjectKind.NODE, "node-1"), "2", START)));
            } else if (i == 30) {
                b.add(EventCodec.encode(
                        new ObjectDeleted(C, new ObjectRef(ObjectKind.SERVICE, "ns5/svc5"), "2", START)));
            } else if (i == 45) {
                b.add(up(SyntheticCluster.service(5)));
            }
            batches.add(b);
        }
        return batches;
    }

    private static SortedMap<Long, ClusterRules> rulesOf(CompilerStores store, long from, long to) {
        SortedMap<Long, ClusterRules> out = new TreeMap<>();
        for (long v = from; v <= to; v++) {
            out.put(v, store.history().rules(C, v));
        }
        return out;
    }

    private static long count(TestDatabase db, String query) {
        return new JdbcTemplate(db.dataSource()).queryForObject(query, Long.class);
    }

    @Test
    void keptVersionsReadBackAsBeforeAndWhatIsOlderIsGone() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            deliver(p, history());
            assertThat(store.history().head(C)).isEqualTo(60);
            SortedMap<Long, ClusterRules> before = rulesOf(store, 1, 60);
            Map<String, ClusterHead> heads = p.heads();
            long checkpointEvent = store.events().checkpoint(C).orElseThrow().lastEventId();
            long keptVersionsEvents =
                    count(db, "SELECT count(*) FROM cluster_event WHERE cluster = '" + C + "' AND version_seq >= 46");
            // A record no cluster could use, received long ago: as old as the versions retention removes.
            deliver(p, List.of(List.of("{not json")));
            new JdbcTemplate(db.dataSource())
                    .update("UPDATE dead_letter SET received_at = ?", java.sql.Timestamp.from(START));

            Map<String, HistoryPruning.Pruned> pruned = sweep(
                            db, new RetentionPolicy(OptionalInt.of(15), Optional.empty()))
                    .sweep();

            assertThat(pruned.get(C).versions()).isEqualTo(45);
            assertThat(store.history().oldest(C)).isEqualTo(46);
            assertThat(store.history().versions(C))
                    .extracting(v -> v.seq())
                    .containsExactlyElementsOf(before.tailMap(46L).keySet());
            // Every kept version reads back exactly, nodes included (node-3 joined and node-1 left before the floor).
            assertThat(rulesOf(store, 46, 60)).isEqualTo(before.tailMap(46L));
            assertThat(store.history().nodes(C, 46)).containsOnlyKeys("node-0", "node-2", "node-3");
            // No fragment is kept that nothing refers to, and the ones only removed versions used are gone.
            assertThat(pruned.get(C).fragments()).isPositive();
            assertThat(count(
                            db,
                            "SELECT count(*) FROM fragment f WHERE NOT EXISTS (SELECT 1 FROM version_entry e WHERE e.hash = f.hash) "
                                    + "AND NOT EXISTS (SELECT 1 FROM cluster_head_entry h WHERE h.hash = f.hash)"))
                    .isZero();
            // Events: those the checkpoint stands for and no kept version needs; the checkpoint's own event stays.
            assertThat(pruned.get(C).events()).isPositive();
            assertThat(count(db, "SELECT min(id) FROM cluster_event WHERE cluster = '" + C + "'"))
                    .isLessThanOrEqualTo(checkpointEvent);
            assertThat(count(
                            db, "SELECT count(*) FROM cluster_event WHERE cluster = '" + C + "' AND version_seq >= 46"))
                    .isEqualTo(keptVersionsEvents)
                    .isEqualTo(16); // one per version, two in version 46
            assertThat(count(db, "SELECT count(*) FROM dead_letter")).isZero();
            assertThat(store.events().removedBefore(C)).isPositive();

            // A compiler taking over sees no difference, and a second pass finds nothing more to do.
            assertThat(processor(store).heads()).isEqualTo(heads);
            assertThat(sweep(db, new RetentionPolicy(OptionalInt.of(15), Optional.empty()))
                            .sweep())
                    .isEmpty();
        }
    }

    @Test
    void versionsANodeRunsOrARollbackNeedsAreKept() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            deliver(processor(store), history());
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            jdbc.update(
                    "INSERT INTO node_status (cluster, node, running, last_version, last_status, duration_ms, rule_count, mode, "
                            + "acked_at, updated_at) VALUES (?, 'node-2', 30, 30, 'APPLIED', 1, 1, 'dry-run', now(), now())",
                    C);
            // node-1 left the cluster at version 21: what it last ran holds nothing back.
            jdbc.update(
                    "INSERT INTO node_status (cluster, node, running, last_version, last_status, duration_ms, rule_count, mode, "
                            + "acked_at, updated_at) VALUES (?, 'node-1', 3, 3, 'APPLIED', 1, 1, 'dry-run', now(), now())",
                    C);
            RetentionSweep sweep = sweep(db, new RetentionPolicy(OptionalInt.of(5), Optional.empty()));
            sweep.sweep();
            assertThat(store.history().oldest(C)).isEqualTo(30);

            jdbc.update(
                    "INSERT INTO operator_action (cluster, action, to_version, actor, reason, requested_at) "
                            + "VALUES (?, 'rollback', 12, 'alice', 'test', now())",
                    C);
            jdbc.update("UPDATE node_status SET running = 60 WHERE node = 'node-2'");
            sweep.sweep();
            assertThat(store.history().oldest(C))
                    .isEqualTo(30); // below the pending rollback's target nothing was left to keep

            jdbc.update("UPDATE operator_action SET status = 'done', result_version = 60, completed_at = now()");
            jdbc.update("DELETE FROM node_status");
            sweep.sweep();
            assertThat(store.history().oldest(C))
                    .isEqualTo(30); // pinned to 12 (already gone): kept from the oldest there is

            jdbc.update(
                    "INSERT INTO operator_action (cluster, action, actor, reason, requested_at, status, result_version, completed_at) "
                            + "VALUES (?, 'resume', 'alice', 'test', now(), 'done', 61, now())",
                    C);
            sweep.sweep();
            assertThat(store.history().oldest(C)).isEqualTo(56);
            // The audit log keeps every action, whatever the versions they name.
            assertThat(count(db, "SELECT count(*) FROM operator_action")).isEqualTo(2);
        }
    }

    @Test
    void anAgeLimitRemovesVersionsOlderThanIt() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            deliver(processor(store), history());
            // The clock is at START + 60 min: versions 1-40 are older than 20 minutes.
            sweep(db, new RetentionPolicy(OptionalInt.empty(), Optional.of(Duration.ofMinutes(20))))
                    .sweep();
            assertThat(store.history().oldest(C)).isEqualTo(41);
        }
    }

    @Test
    void aClusterWhoseRemovedEventsNoCheckpointStandsForPublishesNothingUntilItsWatcherResyncs() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            deliver(p, history());
            sweep(db, new RetentionPolicy(OptionalInt.of(15), Optional.empty())).sweep();
            ClusterEvent change = new ObjectUpserted(C, SyntheticCluster.slice(3, 2, 999), "1", START);
            ClusterHead expected = p.heads().get(C).apply(List.of(change)).next();
            ClusterRules head = store.history().rules(C, 60);

            // The checkpoint is lost: the events it stood for are gone, so the rebuilt state lacks most objects.
            new JdbcTemplate(db.dataSource()).update("DELETE FROM cluster_checkpoint");
            PartitionProcessor q = processor(store);
            assertThat(q.held()).containsOnlyKeys(C);
            assertThat(store.outbox().pending(100))
                    .filteredOn(m -> m.topic().equals(Topics.DEFAULT.resyncs()))
                    .anySatisfy(
                            m -> assertThat(m.payload()).contains("incomplete").contains("it has no checkpoint"));
            assertThat(q.storeRecompiledVersions()).isEmpty();

            // A change arrives: stored, folded, but no version (it would take from the nodes what the lost events
            // held).
            deliver(q, List.of(List.of(EventCodec.encode(change))));
            assertThat(store.history().head(C)).isEqualTo(60);
            assertThat(store.history().rules(C, 60)).isEqualTo(head);

            // The watcher's resync: the whole state again, then its digest, which agrees: the version comes, and it is
            // exactly what a compiler that never lost anything publishes.
            ClusterState s = expected.view().state();
            List<String> resync = new ArrayList<>();
            s.nodes().forEach(n -> resync.add(up(n)));
            s.services().forEach(x -> resync.add(up(x)));
            s.endpointSlices().forEach(x -> resync.add(up(x)));
            for (ObjectKind k : ObjectKind.values()) {
                resync.add(EventCodec.encode(new SyncMarker(C, k, keys(s, k), START)));
            }
            deliver(q, List.of(resync));
            assertThat(store.history().head(C)).isEqualTo(60);
            deliver(
                    q,
                    List.of(List.of(EventCodec.encode(new StateDigest(
                            C,
                            Map.of(
                                    ObjectKind.SERVICE, StateDigest.of(s.services()),
                                    ObjectKind.ENDPOINT_SLICE, StateDigest.of(s.endpointSlices()),
                                    ObjectKind.NODE, StateDigest.of(s.nodes())),
                            Fingerprint.of(ClusterSettings.DEFAULT),
                            null,
                            START)))));
            assertThat(q.held()).isEmpty();
            assertThat(store.history().head(C)).isEqualTo(61);
            assertThat(store.history().rules(C, 61)).isEqualTo(expected.published());
            assertThat(store.history().version(C, 61).orElseThrow().cause()).contains("\"resync\"");
        }
    }

    /**
     * Passes running back to back beside a writer that keeps flipping one Service between two sets of endpoints, so that
     * each flip needs a fragment body the passes keep finding unreferenced: no batch fails, no pass fails, and the head
     * reads back whole. (The narrow race the fragment lock closes is hit on purpose in BatchStoreTest.)
     */
    @Test
    void passesBesideAWriterReusingBodiesBreakNothing() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store);
            deliver(p, history().subList(0, 1));
            RetentionSweep sweep = sweep(db, new RetentionPolicy(OptionalInt.of(1), Optional.empty()));
            java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicInteger passes = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicReference<Throwable> failed =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread pruner = new Thread(() -> {
                try {
                    while (writing.get()) {
                        sweep.sweep();
                        passes.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            pruner.start();
            try {
                for (int i = 0; i < 200; i++) {
                    deliver(p, List.of(List.of(up(SyntheticCluster.slice(0, 2, 1 + i % 2)))));
                }
            } finally {
                writing.set(false);
                pruner.join();
            }
            assertThat(failed.get()).isNull();
            assertThat(passes.get()).isPositive();
            assertThat(store.history().head(C)).isEqualTo(201);
            // Whatever was removed, the head reads back as compiled, every body present.
            assertThat(store.history().rules(C, 201)).isEqualTo(p.heads().get(C).published());
        }
    }

    private static java.util.Set<String> keys(ClusterState s, ObjectKind k) {
        return switch (k) {
            case SERVICE -> s.services().stream().map(x -> x.name().toString()).collect(Collectors.toSet());
            case ENDPOINT_SLICE ->
                s.endpointSlices().stream().map(x -> x.name().toString()).collect(Collectors.toSet());
            case NODE -> s.nodes().stream().map(x -> x.name()).collect(Collectors.toSet());
        };
    }
}
