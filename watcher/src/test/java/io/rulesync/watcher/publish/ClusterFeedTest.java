package io.rulesync.watcher.publish;

import static io.rulesync.watcher.testing.ModelObjects.node;
import static io.rulesync.watcher.testing.ModelObjects.service;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.watcher.testing.Events;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterFeedTest {
    private final List<ClusterEvent> out = new ArrayList<>();
    private final ClusterFeed feed = new ClusterFeed("prod", out::add,
            Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));

    @Test
    void publishesChangesOnly() {
        assertThat(feed.upsert(service("ns", "web", 80), "1")).isTrue();
        assertThat(feed.upsert(service("ns", "web", 80), "2")).isFalse(); // e.g. only an annotation changed
        assertThat(feed.upsert(service("ns", "web", 81), "3")).isTrue();
        assertThat(feed.upsert(node("n1", "10.0.0.1"), "4")).isTrue();
        assertThat(feed.upsert(node("n1", "10.0.0.1"), "5")).isFalse(); // a heartbeat
        assertThat(feed.delete(ObjectKind.SERVICE, "ns/never-seen", "6")).isFalse();
        assertThat(feed.delete(ObjectKind.SERVICE, "ns/web", "7")).isTrue();
        assertThat(feed.delete(ObjectKind.SERVICE, "ns/web", "8")).isFalse();
        assertThat(Events.described(out)).containsExactly(
                "upsert Service ns/web", "upsert Service ns/web", "upsert Node n1", "delete Service ns/web");
        assertThat(feed.suppressedCount()).isEqualTo(2);
    }

    @Test
    void markersListWhatTheStreamHoldsPerKind() {
        feed.upsert(service("ns", "a", 80), "1");
        feed.upsert(service("ns", "b", 80), "2");
        feed.upsert(node("n1", "10.0.0.1"), "3");
        feed.delete(ObjectKind.SERVICE, "ns/a", "4");
        assertThat(feed.sync(ObjectKind.SERVICE).sortedKeys()).containsExactly("ns/b");
        assertThat(feed.sync(ObjectKind.ENDPOINT_SLICE).sortedKeys()).isEmpty();
        assertThat(feed.sync(ObjectKind.NODE).sortedKeys()).containsExactly("n1");
    }

    @Test
    void settingsArePublishedWhenTheyChange() {
        ClusterSettings dual = new ClusterSettings(List.of(IpFamily.IPV4, IpFamily.IPV6), List.of(), false, 14, List.of());
        assertThat(feed.settings(ClusterSettings.DEFAULT)).isTrue();
        assertThat(feed.settings(ClusterSettings.DEFAULT)).isFalse();
        assertThat(feed.settings(dual)).isTrue();
        assertThat(Events.described(out)).containsExactly("settings [IPV4]", "settings [IPV4, IPV6]");
    }

    @Test
    void republishGivesSettingsObjectsThenMarkersOfSyncedKindsOnly() {
        feed.settings(ClusterSettings.DEFAULT);
        feed.upsert(service("ns", "a", 80), "1");
        feed.upsert(node("n1", "10.0.0.1"), "2");
        feed.sync(ObjectKind.SERVICE);
        out.clear();
        feed.republish();
        // No marker for Nodes or EndpointSlices: their first list has not completed, and an empty
        // marker would make the compiler drop all of them.
        assertThat(Events.described(out)).containsExactly(
                "settings [IPV4]", "upsert Service ns/a", "upsert Node n1", "sync Service [ns/a]");
    }

    @Test
    void aDigestFingerprintsWhatWasPublishedForTheKindsListedSoFar() {
        assertThat(feed.digest()).as("nothing listed yet: a digest would describe a state still being read").isFalse();
        feed.settings(ClusterSettings.DEFAULT);
        feed.upsert(service("ns", "a", 80), "1");
        feed.upsert(service("ns", "b", 80), "2");
        feed.upsert(node("n1", "10.0.0.1"), "3");
        feed.sync(ObjectKind.SERVICE);
        feed.upsert(service("ns", "a", 81), "4"); // replaced
        feed.delete(ObjectKind.SERVICE, "ns/b", "5");
        feed.upsert(service("ns", "c", 80), "6");
        out.clear();

        assertThat(feed.digest()).isTrue();
        StateDigest d = (StateDigest) out.get(0);
        assertThat(d.objects()).containsOnlyKeys(ObjectKind.SERVICE);
        // Kept up to date event by event, it equals a fingerprint made from scratch of what the feed holds.
        assertThat(d.objects().get(ObjectKind.SERVICE)).isEqualTo(StateDigest.of(feed.objects(ObjectKind.SERVICE)))
                .isEqualTo(StateDigest.of(List.of(service("ns", "a", 81), service("ns", "c", 80))));
        assertThat(d.settings()).isEqualTo(Fingerprint.of(ClusterSettings.DEFAULT));
    }
}
