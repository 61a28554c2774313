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
import io.rulesync.model.manifest.Problem;
import io.rulesync.watcher.testing.Events;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterFeedTest {
    private final List<ClusterEvent> out = new ArrayList<>();
    private final ClusterFeed feed =
            new ClusterFeed("prod", out::add, Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));

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
        assertThat(Events.described(out))
                .containsExactly(
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
        ClusterSettings dual =
                new ClusterSettings(List.of(IpFamily.IPV4, IpFamily.IPV6), List.of(), false, 14, List.of());
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
        assertThat(Events.described(out))
                .containsExactly("settings [IPV4]", "upsert Service ns/a", "upsert Node n1", "sync Service [ns/a]");
    }

    @Test
    void aDigestFingerprintsWhatWasPublishedForTheKindsListedSoFar() {
        assertThat(feed.digest())
                .as("nothing listed yet: a digest would describe a state still being read")
                .isFalse();
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
        assertThat(d.objects().get(ObjectKind.SERVICE))
                .isEqualTo(StateDigest.of(feed.objects(ObjectKind.SERVICE)))
                .isEqualTo(StateDigest.of(List.of(service("ns", "a", 81), service("ns", "c", 80))));
        assertThat(d.settings()).isEqualTo(Fingerprint.of(ClusterSettings.DEFAULT));
    }

    private static final Problem PORT =
            new Problem("a.yaml (document 1)", "Service ns/web", "spec.ports[0].port", "0 is out of range (1-65535)");
    private static final Problem IP =
            new Problem("a.yaml (document 1)", "Service ns/web", "spec.clusterIP", "'x' is not an IP address");

    @Test
    void aSourceIsReportedWhenItsProblemsChangeOnly() {
        assertThat(feed.report("a.yaml", "file a.yaml", List.of()))
                .as("fine, and never reported: nothing to say")
                .isFalse();
        assertThat(feed.report("a.yaml", "file a.yaml", List.of(PORT))).isTrue();
        assertThat(feed.report("a.yaml", "file a.yaml", List.of(PORT)))
                .as("read again, still broken the same way")
                .isFalse();
        assertThat(feed.report("a.yaml", "file a.yaml, read again", List.of(PORT)))
                .as("only the problems count")
                .isFalse();
        assertThat(feed.report("b.yaml", "file b.yaml", List.of(IP))).isTrue();
        assertThat(feed.report("a.yaml", "file a.yaml", List.of(PORT, IP))).isTrue();
        assertThat(feed.report("a.yaml", "file a.yaml", List.of())).as("fixed").isTrue();
        assertThat(feed.report("a.yaml", "file a.yaml", List.of())).isFalse();
        assertThat(Events.described(out))
                .containsExactly(
                        "problems a.yaml [Service ns/web spec.ports[0].port]",
                        "problems b.yaml [Service ns/web spec.clusterIP]",
                        "problems a.yaml [Service ns/web spec.ports[0].port, Service ns/web spec.clusterIP]",
                        "problems a.yaml []");
        assertThat(feed.reportedSources()).containsExactly("b.yaml");
        assertThat(feed.problemReports()).isEqualTo(4);
        assertThat(feed.rejectedCount()).isEqualTo(3);
        assertThat(feed.refusedObjects()).isEqualTo(1);
    }

    @Test
    void theProblemSyncFollowsTheFirstListOfEveryKindAndEveryRepublish() {
        feed.settings(ClusterSettings.DEFAULT);
        feed.report(
                "Node n1",
                "invalid object not published",
                List.of(new Problem("", "Node n1", "status.addresses", "x")));
        feed.sync(ObjectKind.SERVICE);
        feed.sync(ObjectKind.ENDPOINT_SLICE);
        assertThat(Events.problems(out))
                .as("not all read yet: an earlier run's reports may still be true")
                .containsExactly("problems Node n1 [Node n1 status.addresses]");
        feed.sync(ObjectKind.NODE);
        feed.sync(ObjectKind.NODE); // a relist: the sync went out once
        assertThat(Events.problems(out))
                .containsExactly("problems Node n1 [Node n1 status.addresses]", "problem-sync [Node n1]");

        out.clear();
        feed.republish();
        assertThat(Events.described(out))
                .containsExactly(
                        "settings [IPV4]",
                        "sync Service []",
                        "sync EndpointSlice []",
                        "sync Node []",
                        "problems Node n1 [Node n1 status.addresses]",
                        "problem-sync [Node n1]");
        // The report goes again as it was made: when it was reported does not move with a republish.
        assertThat(out.get(4)).isSameAs(feed.currentProblems().get(0));
    }

    @Test
    void aDigestFingerprintsTheReportsOnceTheyWereListed() {
        feed.settings(ClusterSettings.DEFAULT);
        feed.report("a.yaml", "file a.yaml", List.of(PORT));
        feed.sync(ObjectKind.SERVICE);
        feed.digest();
        assertThat(((StateDigest) out.get(out.size() - 1)).problems())
                .as("before the problem sync")
                .isNull();
        feed.sync(ObjectKind.ENDPOINT_SLICE);
        feed.sync(ObjectKind.NODE);
        feed.report("b.yaml", "file b.yaml", List.of(IP));
        feed.digest();
        assertThat(((StateDigest) out.get(out.size() - 1)).problems())
                .isEqualTo(StateDigest.ofProblems(feed.currentProblems()))
                .extracting(Fingerprint::count)
                .isEqualTo(2L);
    }

    @Test
    void problemTextsAreEscapedInTheReportAndTheLog() {
        feed.report(
                "dir/a\nb.yaml", "file dir/a\nb.yaml", List.of(new Problem("dir/a\nb.yaml", "", "", "bad\u001b[2J")));
        ClusterEvent.ProblemsReported r = (ClusterEvent.ProblemsReported) out.get(0);
        assertThat(r.source()).isEqualTo("dir/a\\x0ab.yaml");
        assertThat(r.problems().get(0).message()).isEqualTo("bad\\x1b[2J");
        assertThat(feed.reportedSources()).containsExactly(ClusterFeed.sourceName("dir/a\nb.yaml"));
        assertThat(feed.report(ClusterFeed.sourceName("dir/a\nb.yaml"), "gone", List.of()))
                .as("cleared by its printed name")
                .isTrue();
    }
}
