package io.rulesync.compiler.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.fold.ProblemReports;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ProblemSync;
import io.rulesync.model.event.ClusterEvent.ProblemsReported;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.Problem;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Problem reports in a cluster's head: state folded from the log, checked by digests, and never a version. */
class ProblemsInTheHeadTest {
    private static final Instant T = Fixtures.T;
    private static final String C = "demo-a";
    private static final Problem PORT = new Problem(
            "web.yaml (document 1)", "Service shop/bad", "spec.ports[0].port", "0 is out of range (1-65535)");

    private static ProblemsReported report(String source, Instant at, Problem... problems) {
        return ProblemsReported.of(C, source, List.of(problems), at);
    }

    private static ClusterHead withVersion() {
        return ClusterHead.empty(C)
                .apply(List.of(
                        new ClusterEvent.SettingsChanged(C, ClusterSettings.DEFAULT, T),
                        ClusterHeadTest.NODE_A,
                        ClusterHeadTest.WEB,
                        ClusterHeadTest.slice("10.244.0.10")))
                .next();
    }

    @Test
    void reportsAloneChangeTheProblemsButMakeNoVersion() {
        ClusterHead h = withVersion();
        ClusterHead.Step s =
                h.apply(List.of(report("web.yaml", T, PORT), report("n.yaml", T, new Problem("n.yaml", "", "", "x"))));
        assertThat(s.newVersion()).isFalse();
        assertThat(s.diff().isEmpty()).isTrue();
        assertThat(s.next().version()).isEqualTo(h.version());
        assertThat(s.next().published()).isSameAs(h.published());
        assertThat(s.next().problems().bySource()).containsOnlyKeys("n.yaml", "web.yaml");
        assertThat(s.next().problems().refusedObjects()).isEqualTo(2);

        // Not on a cluster with no version yet either (its first events may all be refused).
        ClusterHead.Step fresh = ClusterHead.empty(C).apply(List.of(report("web.yaml", T, PORT)));
        assertThat(fresh.newVersion()).isFalse();
        assertThat(fresh.next().version()).isZero();

        // Mixed with a change of rules: the version is made of the change.
        ClusterHead.Step mixed =
                s.next().apply(List.of(report("web.yaml", T), ClusterHeadTest.slice("10.244.0.10", "10.244.0.11")));
        assertThat(mixed.newVersion()).isTrue();
        assertThat(mixed.next().problems().bySource()).containsOnlyKeys("n.yaml");
    }

    @Test
    void aRepeatedReportKeepsWhenTheSourceWasFirstReportedAndASyncDropsUnlistedSources() {
        ProblemReports p = ProblemReports.NONE.applyAll(List.of(report("a.yaml", T, PORT), report("b.yaml", T, PORT)));
        ProblemReports again = p.apply(report("a.yaml", T.plusSeconds(300), PORT));
        assertThat(again).isSameAs(p);
        assertThat(again.bySource().get("a.yaml").observedAt()).isEqualTo(T);
        assertThat(again.changedSince(p)).isEmpty();

        ProblemReports synced = p.apply(new ProblemSync(C, Set.of("b.yaml"), T));
        assertThat(synced.bySource()).containsOnlyKeys("b.yaml");
        assertThat(synced.changedSince(p)).containsOnlyKeys("a.yaml").containsEntry("a.yaml", null);
        ProblemReports changed =
                synced.apply(report("b.yaml", T.plusSeconds(1), PORT, new Problem("b.yaml", "", "", "y")));
        assertThat(changed.changedSince(synced)).containsOnlyKeys("b.yaml");
        assertThat(changed.changedSince(synced).get("b.yaml").observedAt()).isEqualTo(T.plusSeconds(1));
    }

    @Test
    void aDigestThatDisagreesOnTheProblemsSaysSo() {
        ClusterHead h =
                withVersion().apply(List.of(report("web.yaml", T, PORT))).next();
        Map<ObjectKind, Fingerprint> objects = Map.of();
        Fingerprint theirs = StateDigest.ofProblems(List.of(report("web.yaml", T, PORT), report("lost.yaml", T, PORT)));
        ClusterHead.Step s = h.apply(List.of(new StateDigest(C, objects, null, theirs, T)));
        assertThat(s.digests())
                .singleElement()
                .satisfies(d ->
                        assertThat(d.differences()).containsExactly("sources with problems: 1 here, 2 at the watcher"));
        // The digest is checked at its place: with the lost report before it, they agree.
        ClusterHead.Step healed =
                h.apply(List.of(report("lost.yaml", T, PORT), new StateDigest(C, objects, null, theirs, T)));
        assertThat(healed.digests())
                .singleElement()
                .satisfies(d -> assertThat(d.agrees()).isTrue());
        // A digest without a fingerprint of problems (an older watcher) checks the objects only.
        assertThat(h.apply(List.of(new StateDigest(C, objects, null, T)))
                        .digests()
                        .get(0)
                        .agrees())
                .isTrue();
    }

    @Test
    void aRebuiltHeadHoldsTheSameProblems() {
        List<List<ClusterEvent>> batches = List.of(
                List.of(ClusterHeadTest.NODE_A, report("web.yaml", T, PORT)),
                List.of(report("n.yaml", T, PORT), ClusterHeadTest.WEB),
                List.of(new ProblemSync(C, Set.of("n.yaml"), T)),
                List.of(report("x.yaml", T, PORT)));
        ClusterHead live = ClusterHead.empty(C);
        List<ClusterEvent> seen = new ArrayList<>();
        for (List<ClusterEvent> b : batches) {
            live = live.apply(b).next();
            seen.addAll(b);
        }
        ClusterHead rebuilt =
                ClusterHead.rebuilt(C, seen, live.version(), live.published(), live.pin(), live.lineage());
        assertThat(rebuilt).isEqualTo(live);
        assertThat(rebuilt.problems().bySource()).containsOnlyKeys("n.yaml", "x.yaml");
    }
}
