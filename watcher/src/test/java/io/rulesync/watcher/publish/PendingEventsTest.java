package io.rulesync.watcher.publish;

import static io.rulesync.watcher.testing.ModelObjects.service;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.watcher.publish.PendingEvents.Entry;
import io.rulesync.watcher.testing.Events;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PendingEventsTest {
    private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

    private static ClusterEvent up(String cluster, String name, int port) {
        return new ObjectUpserted(cluster, service("ns", name, port), "", T);
    }

    private static List<String> describe(List<Entry> batch) {
        return batch.stream()
                .map(e -> e.event().cluster() + " " + Events.describe(e.event())
                        + (e.event() instanceof ObjectUpserted u
                                ? " :"
                                        + ((io.rulesync.model.cluster.Service) u.object())
                                                .ports()
                                                .get(0)
                                                .port()
                                : ""))
                .toList();
    }

    private static BitSet bits(int... set) {
        BitSet b = new BitSet();
        for (int i : set) {
            b.set(i);
        }
        return b;
    }

    @Test
    void keepsOnlyTheLatestEventPerSlotInOrderOfTheLatestOffer() throws Exception {
        PendingEvents q = new PendingEvents();
        q.offer(up("a", "web", 1));
        q.offer(up("a", "db", 1));
        q.offer(up("b", "web", 1)); // another cluster: another slot
        q.offer(up("a", "web", 2));
        q.offer(new SyncMarker("a", ObjectKind.SERVICE, Set.of("ns/web"), T));
        q.offer(new ObjectDeleted("a", new ObjectRef(ObjectKind.SERVICE, "ns/db"), "", T));
        q.offer(new SyncMarker("a", ObjectKind.SERVICE, Set.of("ns/web"), T));
        q.offer(new SettingsChanged("a", ClusterSettings.DEFAULT, T));
        assertThat(q.size()).isEqualTo(5);
        assertThat(q.supersededCount()).isEqualTo(3);
        assertThat(describe(q.take(100, 0)))
                .containsExactly(
                        "b upsert Service ns/web :1",
                        "a upsert Service ns/web :2",
                        "a delete Service ns/db",
                        "a sync Service [ns/web]",
                        "a settings [IPV4]");
        assertThat(q.size()).isZero();
        assertThat(q.isIdle()).isFalse(); // in flight until settled
    }

    @Test
    void aFailedEventGoesBackInItsPlaceUnlessANewerOneWasOffered() throws Exception {
        PendingEvents q = new PendingEvents();
        q.offer(up("a", "one", 1));
        q.offer(up("a", "two", 1));
        q.offer(up("a", "three", 1));
        List<Entry> batch = q.take(100, 0);
        q.offer(up("a", "two", 2)); // while the batch is in flight
        q.offer(up("a", "four", 1));
        q.settle(batch, bits(0, 1)); // one and two failed, three delivered
        // "one" is retried before the newer events; the failed "two:1" is dropped because "two:2" supersedes it.
        assertThat(describe(q.take(100, 0)))
                .containsExactly(
                        "a upsert Service ns/one :1", "a upsert Service ns/two :2", "a upsert Service ns/four :1");
    }

    @Test
    void aSlotInFlightIsNotHandedOutTwice() throws Exception {
        PendingEvents q = new PendingEvents();
        q.offer(up("a", "web", 1));
        List<Entry> first = q.take(100, 0);
        q.offer(up("a", "web", 2));
        q.offer(up("a", "db", 1));
        assertThat(describe(q.take(100, 0))).containsExactly("a upsert Service ns/db :1");
        q.settle(first, new BitSet()); // delivered
        assertThat(describe(q.take(100, 0))).containsExactly("a upsert Service ns/web :2");
    }

    @Test
    void aFailedOlderStateIsNeverRetriedAfterANewerOneWasDelivered() throws Exception {
        PendingEvents q = new PendingEvents();
        q.offer(up("a", "web", 1));
        List<Entry> old = q.take(100, 0);
        q.offer(up("a", "web", 2));
        q.settle(old, bits(0)); // web:1 failed, but web:2 is queued: web:1 is gone for good
        List<Entry> newer = q.take(100, 0);
        q.settle(newer, new BitSet());
        assertThat(describe(newer)).containsExactly("a upsert Service ns/web :2");
        assertThat(q.take(100, 0)).isEmpty();
        assertThat(q.isIdle()).isTrue();
    }

    @Test
    void takeWaitsForAnOffer() throws Exception {
        PendingEvents q = new PendingEvents();
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(50); // deliberate: the offer comes after take has started waiting
            } catch (InterruptedException e) {
                return;
            }
            q.offer(up("a", "web", 1));
        });
        t.start();
        assertThat(q.take(10, 30_000)).hasSize(1);
        t.join();
    }

    private static StateDigest digest(String cluster) {
        return new StateDigest(cluster, Map.of(), null, T);
    }

    @Test
    void aDigestIsDroppedWhenAnEventItDescribesMovesBehindIt() throws Exception {
        PendingEvents q = new PendingEvents();
        q.offer(up("a", "web", 1));
        q.offer(up("b", "web", 1));
        q.offer(digest("a"));
        q.offer(digest("b"));
        // web:1 of cluster a is superseded: it now leaves after a's digest, which describes a state with web:1 that
        // the stream will never show. b's digest and a's later events are untouched.
        q.offer(up("a", "web", 2));
        assertThat(q.staleDigestCount()).isEqualTo(1);
        assertThat(describe(q.take(100, 0)))
                .containsExactly("b upsert Service ns/web :1", "b digest []", "a upsert Service ns/web :2");

        // An event offered after the digest, superseded later, leaves the digest alone.
        PendingEvents r = new PendingEvents();
        r.offer(digest("a"));
        r.offer(up("a", "web", 1));
        r.offer(up("a", "web", 2));
        assertThat(r.staleDigestCount()).isZero();
        assertThat(describe(r.take(100, 0))).containsExactly("a digest []", "a upsert Service ns/web :2");
    }

    @Test
    void eachSourcesProblemsAndTheProblemSyncAreSlotsOfTheirOwn() throws Exception {
        PendingEvents q = new PendingEvents();
        io.rulesync.model.manifest.Problem p =
                new io.rulesync.model.manifest.Problem("a.yaml", "", "", "not valid YAML or JSON");
        q.offer(ClusterEvent.ProblemsReported.of("a", "a.yaml", List.of(p), T));
        q.offer(ClusterEvent.ProblemsReported.of("a", "b.yaml", List.of(p), T));
        q.offer(new ClusterEvent.ProblemSync("a", Set.of("a.yaml", "b.yaml"), T));
        q.offer(ClusterEvent.ProblemsReported.of("a", "a.yaml", List.of(), T)); // fixed before it went out
        q.offer(ClusterEvent.ProblemsReported.of("b", "a.yaml", List.of(p), T)); // another cluster's file of that name
        assertThat(q.supersededCount()).isEqualTo(1);
        assertThat(describe(q.take(100, 0)))
                .containsExactly(
                        "a problems b.yaml [-]",
                        "a problem-sync [a.yaml, b.yaml]",
                        "a problems a.yaml []",
                        "b problems a.yaml [-]");
    }
}
