package io.rulesync.compiler.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ListingStarted;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A cluster's first version is its first complete state: once a watcher announced its listing, nothing is published
 * before a sync marker of every kind has come, however the events are cut into batches. Clusters that already have
 * versions, and feeds that announce no listing, are not held.
 */
class FirstListingTest {
    private static final String C = "demo-a";
    private static final Instant T = Fixtures.T;

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(C, yaml);
    }

    private static SyncMarker marker(ObjectKind kind, String... keys) {
        return new SyncMarker(C, kind, Set.of(keys), T);
    }

    private static final List<ClusterEvent> LISTING = List.of(
            new ListingStarted(C, T),
            new SettingsChanged(C, ClusterSettings.DEFAULT, T),
            up(Fixtures.node("node-a", "192.168.0.2")),
            marker(ObjectKind.NODE, "node-a"),
            up(Fixtures.service("web", "10.96.0.1")),
            marker(ObjectKind.SERVICE, "shop/web"),
            up(Fixtures.slice("web", "node-a", "10.244.0.10")),
            marker(ObjectKind.ENDPOINT_SLICE, "shop/web-1"));

    @Test
    void nothingIsPublishedBeforeEveryKindIsListedWhateverTheBatches() {
        // Every way of cutting the listing into two batches: version 1 comes with the batch holding the last marker.
        for (int cut = 1; cut < LISTING.size(); cut++) {
            ClusterHead.Step first = ClusterHead.empty(C).apply(LISTING.subList(0, cut));
            assertThat(first.newVersion()).as("cut at %d", cut).isFalse();
            assertThat(first.next().version()).isZero();
            assertThat(first.next().published().nodes()).isEmpty();
            ClusterHead.Step rest = first.next().apply(LISTING.subList(cut, LISTING.size()));
            assertThat(rest.newVersion()).as("cut at %d", cut).isTrue();
            assertThat(rest.next().version()).isEqualTo(1);
            assertThat(rest.next().awaitingListing()).isEmpty();
            assertThat(rest.next()
                            .published()
                            .ruleSet("node-a", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .contains("10.96.0.1")
                    .contains("10.244.0.10");
        }
        ClusterHead.Step partial = ClusterHead.empty(C).apply(LISTING.subList(0, 6));
        assertThat(partial.next().awaitingListing()).containsExactly(ObjectKind.ENDPOINT_SLICE);
    }

    @Test
    void aRestartedListingAsksForEveryKindAgain() {
        List<ClusterEvent> events = new ArrayList<>(LISTING.subList(0, 6)); // Nodes and Services listed, not the slices
        events.add(new ListingStarted(C, T)); // the watcher restarted
        events.add(marker(ObjectKind.ENDPOINT_SLICE, "shop/web-1"));
        ClusterHead.Step s = ClusterHead.empty(C).apply(events);
        assertThat(s.newVersion()).isFalse();
        assertThat(s.next().awaitingListing()).containsExactlyInAnyOrder(ObjectKind.NODE, ObjectKind.SERVICE);
        ClusterHead.Step done =
                s.next().apply(List.of(marker(ObjectKind.NODE, "node-a"), marker(ObjectKind.SERVICE, "shop/web")));
        assertThat(done.next().version()).isEqualTo(1);
    }

    @Test
    void aFeedThatAnnouncesNoListingAndAClusterWithVersionsAreNotHeld() {
        ClusterHead.Step unannounced = ClusterHead.empty(C)
                .apply(List.of(
                        new SettingsChanged(C, ClusterSettings.DEFAULT, T),
                        up(Fixtures.node("node-a", "192.168.0.2"))));
        assertThat(unannounced.next().version()).isEqualTo(1);

        // A watcher restarting against a cluster with versions: its changes publish at once, markers or not.
        ClusterHead v1 = ClusterHead.empty(C).apply(LISTING).next();
        ClusterHead.Step restart =
                v1.apply(List.of(new ListingStarted(C, T), up(Fixtures.slice("web", "node-a", "10.244.0.11"))));
        assertThat(restart.newVersion()).isTrue();
        assertThat(restart.next().version()).isEqualTo(2);
        assertThat(restart.next().awaitingListing()).isEmpty();
    }

    @Test
    void aRebuildRemembersWhatIsStillToBeListed() {
        ClusterHead rebuilt = ClusterHead.rebuilt(
                C,
                LISTING.subList(0, 6),
                0,
                io.rulesync.model.rules.ClusterRules.EMPTY,
                null,
                io.rulesync.model.rules.Lineage.UNKNOWN);
        assertThat(rebuilt.awaitingListing()).containsExactly(ObjectKind.ENDPOINT_SLICE);
        assertThat(rebuilt)
                .isEqualTo(ClusterHead.empty(C).apply(LISTING.subList(0, 6)).next());
        ClusterHead.Step done = rebuilt.apply(LISTING.subList(6, LISTING.size()));
        assertThat(done.next().version()).isEqualTo(1);
    }

    @Test
    void anOperatorActionWhileTheFirstListingIsAwaitedIsRefusedWithTheReason() {
        ClusterHead.Step s = ClusterHead.empty(C)
                .apply(List.of(
                        LISTING.get(0), LISTING.get(2), new RollbackRequested(C, 3, 1, "alice", "too early", T)));
        assertThat(s.actions())
                .singleElement()
                .satisfies(
                        a -> assertThat(a.refusal())
                                .contains(
                                        "has no version yet: its watcher's first listing of Service, EndpointSlice, Node has not come"));
    }
}
