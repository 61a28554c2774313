package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.eventlog.LiveLog;
import io.rulesync.compiler.eventlog.LogCheck;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.topic.LogPosition;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A stored position belongs to one log: a replaced log, or records lost to retention, resets the
 * position, rebuilds from the database and asks the watchers for a resync; a watcher's digest that
 * disagrees with what was folded asks too. Against the real PostgreSQL, with the live log described
 * by hand (the Kafka side is {@code EventsLogKafkaTest}'s).
 */
@RequiresPostgres
class LogResetTest {
    private static final String OLD = "OLDOLDOLDOLDOLDOLDOLDO";
    private static final String NEW = "NEWNEWNEWNEWNEWNEWNEWN";

    private static PartitionProcessor processor(CompilerStores store, Clock clock) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                clock,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                Duration.ofMinutes(1));
    }

    private static List<ResyncRequest> resyncRequests(CompilerStores store) {
        return store.outbox().pending(1000).stream()
                .filter(m -> m.topic().equals(Topics.DEFAULT.resyncs()))
                .map(m -> ResyncRequest.decode(m.payload()))
                .toList();
    }

    /** A processor that adopted the log OLD and read the scripted history of clusters a and b from it. */
    private static PartitionProcessor scriptedOnOldLog(CompilerStores store, Clock clock) {
        PartitionProcessor p = processor(store, clock);
        assertThat(p.reconcile(new LiveLog(OLD, 0, 0))).isInstanceOf(LogCheck.Verdict.Adopted.class);
        deliver(p, ScriptedEvents.batches());
        return p;
    }

    private static void deliver(PartitionProcessor p, List<List<PartitionProcessor.Record>> batches) {
        for (List<PartitionProcessor.Record> b : batches) {
            assertThat(p.process(b)).isEqualTo(PartitionProcessor.Outcome.DONE);
        }
    }

    @Test
    void aReplacedLogStartsAgainFromItsBeginningInANewEpochWithoutLosingOrRepeatingVersions() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            Clock clock = Clock.fixed(Instant.parse("2026-12-01T10:00:00Z"), ZoneOffset.UTC);
            PartitionProcessor p = scriptedOnOldLog(store, clock);
            long end = p.position();
            assertThat(store.batches().position("compiler", Topics.DEFAULT.events(), 0))
                    .contains(new LogPosition(end, 0, OLD, 0, end));
            Map<String, ClusterHead> heads = p.heads();
            long versionsA = store.history().head("a");

            // A new broker: the same topic name, another id, its records numbered from 0 again.
            LogCheck.Verdict v = p.reconcile(new LiveLog(NEW, 0, 3));
            assertThat(v).isInstanceOf(LogCheck.Verdict.Reset.class);
            assertThat(p.position()).isZero();
            assertThat(store.batches().position("compiler", Topics.DEFAULT.events(), 0))
                    .contains(new LogPosition(0, 1, NEW, 0, 3));
            assertThat(p.heads())
                    .as("rebuilt from the database: the same state")
                    .isEqualTo(heads);
            assertThat(resyncRequests(store)).extracting(ResyncRequest::cluster).containsExactly("a", "b");
            assertThat(resyncRequests(store).get(0).reason())
                    .contains("a different log")
                    .contains(NEW)
                    .contains(OLD);

            // The watcher's resync on the new log: the same facts at offsets already used by the old log are
            // stored (another epoch), and make no version; an edit after them does.
            long events = db.count("cluster_event");
            deliver(
                    p,
                    List.of(List.of(
                            new PartitionProcessor.Record(0, "a", ScriptedEvents.node("a", "n1", "10.1.0.1")),
                            new PartitionProcessor.Record(1, "a", ScriptedEvents.service("a", "web", "10.96.0.1")))));
            assertThat(db.count("cluster_event")).isEqualTo(events + 2);
            assertThat(store.history().head("a")).isEqualTo(versionsA);
            deliver(
                    p,
                    List.of(List.of(
                            new PartitionProcessor.Record(2, "a", ScriptedEvents.slice("a", "web", "10.244.0.7")))));
            assertThat(store.history().head("a")).isEqualTo(versionsA + 1);

            // A restart reads the new log's position back and trusts it there.
            PartitionProcessor restarted = processor(store, clock);
            assertThat(restarted.position()).isEqualTo(3);
            assertThat(restarted.reconcile(new LiveLog(NEW, 0, 3))).isInstanceOf(LogCheck.Verdict.Same.class);
            assertThat(restarted.heads()).isEqualTo(p.heads());
        }
    }

    @Test
    void recordsDeletedBeforeTheyWereReadSkipAheadAndAskForAResync() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            Clock clock = Clock.fixed(Instant.parse("2026-12-01T10:00:00Z"), ZoneOffset.UTC);
            PartitionProcessor p = scriptedOnOldLog(store, clock);
            long end = p.position();

            // While the compiler was stopped, retention deleted everything up to offset end + 40.
            PartitionProcessor restarted = processor(store, clock);
            LogCheck.Verdict v = restarted.reconcile(new LiveLog(OLD, end + 40, end + 45));
            assertThat(v).isInstanceOf(LogCheck.Verdict.Reset.class);
            assertThat(((LogCheck.Verdict.Reset) v).reason()).contains("deleted before being read");
            assertThat(restarted.position()).isEqualTo(end + 40);
            assertThat(restarted.logPosition().orElseThrow().epoch())
                    .as("offsets keep growing: same epoch")
                    .isZero();
            assertThat(resyncRequests(store)).extracting(ResyncRequest::cluster).containsExactly("a", "b");
        }
    }

    @Test
    void aDisagreeingDigestAsksForOneResyncPerCooldownAndAnAgreeingOneChangesNothing() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T10:00:00Z"));
            Clock clock = new Clock() {
                @Override
                public ZoneOffset getZone() {
                    return ZoneOffset.UTC;
                }

                @Override
                public Clock withZone(java.time.ZoneId zone) {
                    return this;
                }

                @Override
                public Instant instant() {
                    return now.get();
                }
            };
            PartitionProcessor p = scriptedOnOldLog(store, clock);
            ClusterState a = p.heads().get("a").view().state();
            long events = db.count("cluster_event");
            long versions = store.history().head("a");

            long offset = p.position();
            deliver(
                    p,
                    List.of(List.of(
                            new PartitionProcessor.Record(offset, "a", digest("a", a, ClusterSettings.DEFAULT)))));
            assertThat(resyncRequests(store)).isEmpty();
            assertThat(db.count("cluster_event"))
                    .as("digests are checks, not facts: not stored")
                    .isEqualTo(events);

            // The watcher holds a Service the compiler never got.
            ClusterState watcher = a.withService(
                    ((io.rulesync.model.cluster.Service) Fixtures.object(Fixtures.service("lost", "10.96.0.77"))));
            String disagreeing = digest("a", watcher, ClusterSettings.DEFAULT);
            deliver(
                    p,
                    List.of(List.of(
                            new PartitionProcessor.Record(offset + 1, "a", disagreeing),
                            new PartitionProcessor.Record(offset + 2, "a", disagreeing))));
            assertThat(resyncRequests(store)).hasSize(1);
            assertThat(resyncRequests(store).get(0).reason()).contains("Services: 1 here, 2 at the watcher");
            now.set(now.get().plusSeconds(30));
            deliver(p, List.of(List.of(new PartitionProcessor.Record(offset + 3, "a", disagreeing))));
            assertThat(resyncRequests(store)).as("within the cooldown").hasSize(1);
            now.set(now.get().plusSeconds(31));
            deliver(p, List.of(List.of(new PartitionProcessor.Record(offset + 4, "a", disagreeing))));
            assertThat(resyncRequests(store)).hasSize(2);

            // A digest checks the state at its place in the log: the events before it in the same batch count,
            // the ones after it do not.
            now.set(now.get().plusSeconds(120));
            deliver(
                    p,
                    List.of(List.of(
                            new PartitionProcessor.Record(
                                    offset + 5, "a", ScriptedEvents.service("a", "lost", "10.96.0.77")),
                            new PartitionProcessor.Record(offset + 6, "a", disagreeing),
                            new PartitionProcessor.Record(
                                    offset + 7, "a", ScriptedEvents.service("a", "later", "10.96.0.78")))));
            assertThat(resyncRequests(store)).hasSize(2);
            assertThat(store.history().head("a")).isEqualTo(versions + 1);

            // A digest of a cluster the compiler knows nothing of makes no version (it has no events to rebuild from).
            deliver(
                    p,
                    List.of(List.of(new PartitionProcessor.Record(
                            offset + 8, "c", digest("c", watcher, ClusterSettings.DEFAULT)))));
            assertThat(store.history().head("c")).isZero();
            assertThat(resyncRequests(store)).extracting(ResyncRequest::cluster).contains("c");
        }
    }

    @Test
    void anOperatorActionThatExpiredBeforeItArrivedIsNotCarriedOutAndSaysSo() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            Clock clock = Clock.fixed(Instant.parse("2026-12-01T10:00:00Z"), ZoneOffset.UTC);
            PartitionProcessor p = scriptedOnOldLog(store, clock);
            OperatorActionStore actions = new OperatorActionStore(db.dataSource());
            Instant requested = Instant.parse("2026-12-01T10:00:00Z");
            long id = actions.request("a", 1L, "alice", "bad rollout", requested, Topics.DEFAULT.events());
            String event = store.outbox().pending(1000).stream()
                    .filter(m -> m.topic().equals(Topics.DEFAULT.events()))
                    .findFirst()
                    .orElseThrow()
                    .payload();

            assertThat(actions.expire(
                            "a",
                            requested.plusSeconds(1),
                            requested.plusSeconds(301),
                            OperatorActionStore.expiredOutcome(Duration.ofMinutes(5))))
                    .extracting(a -> a.id())
                    .containsExactly(id);
            assertThat(actions.find(id).orElseThrow().status()).isEqualTo("expired");
            assertThat(actions.find(id).orElseThrow().outcome()).startsWith("not carried out within 5m");

            long versions = store.history().head("a");
            deliver(p, List.of(List.of(new PartitionProcessor.Record(p.position(), "a", event))));
            assertThat(store.history().head("a")).isEqualTo(versions);
            assertThat(store.outbox().pending(1000))
                    .filteredOn(m -> m.topic().equals(Topics.DEFAULT.deadLetters()))
                    .anySatisfy(m -> assertThat(m.payload()).contains("is expired in operator_action, not pending"));
            // The cluster accepts the next action.
            assertThat(actions.request("a", 1L, "alice", "again", requested.plusSeconds(400), Topics.DEFAULT.events()))
                    .isGreaterThan(id);
        }
    }

    private static String digest(String cluster, ClusterState s, ClusterSettings settings) {
        return EventCodec.encode(new StateDigest(
                cluster,
                Map.of(
                        ObjectKind.SERVICE, StateDigest.of(s.services()),
                        ObjectKind.ENDPOINT_SLICE, StateDigest.of(s.endpointSlices()),
                        ObjectKind.NODE, StateDigest.of(s.nodes())),
                Fingerprint.of(settings),
                ScriptedEvents.T));
    }
}
