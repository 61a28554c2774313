package io.rulesync.compiler.version;

import static io.rulesync.compiler.version.ClusterHeadTest.NODE_A;
import static io.rulesync.compiler.version.ClusterHeadTest.NODE_B;
import static io.rulesync.compiler.version.ClusterHeadTest.WEB;
import static io.rulesync.compiler.version.ClusterHeadTest.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.testsupport.cluster.Fixtures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Rollback, pinning and resume, on the pure head: what is published, and when a version is made. */
class PinningTest {
    private static final String C = "demo-a";

    /** Every version's published rules, as the store would hold them. */
    private final Map<Long, ClusterRules> stored = new HashMap<>();

    private final ClusterHead.History history = v -> Optional.ofNullable(stored.get(v));
    private ClusterHead head;
    private long actions;

    private ClusterHead.Step step(ClusterEvent... events) {
        ClusterHead.Step s = head.apply(List.of(events), history);
        head = s.next();
        stored.put(head.version(), head.published());
        return s;
    }

    private RollbackRequested rollback(long to) {
        return new RollbackRequested(C, ++actions, to, "alice", "bad endpoint change", Fixtures.T);
    }

    private ResumeRequested resume() {
        return new ResumeRequested(C, ++actions, "alice", "fixed upstream", Fixtures.T);
    }

    @BeforeEach
    void threeVersions() {
        head = ClusterHead.empty(C);
        step(NODE_A, WEB, slice("10.244.0.10")); // v1
        step(slice("10.244.0.10", "10.244.0.11")); // v2
        step(slice("10.244.0.12")); // v3
        assertThat(head.version()).isEqualTo(3);
    }

    @Test
    void aRollbackPublishesTheOldRulesAsANewVersionAndHoldsLaterChanges() {
        ClusterHead.Step back = step(rollback(1));
        assertThat(back.newVersion()).isTrue();
        assertThat(head.version()).isEqualTo(4);
        assertThat(head.published()).isEqualTo(stored.get(1L));
        assertThat(head.pin()).isEqualTo(new ClusterHead.Pin(1, 1));
        assertThat(back.actions())
                .singleElement()
                .satisfies(o -> assertThat(o.accepted()).isTrue());
        // The delta takes a node from v3's rules to v1's.
        assertThat(back.diff().isEmpty()).isFalse();

        // Pinned: a watched change is folded and compiled, but nothing is published.
        ClusterHead.Step held = step(slice("10.244.0.20"));
        assertThat(held.newVersion()).isFalse();
        assertThat(head.version()).isEqualTo(4);
        assertThat(head.published()).isEqualTo(stored.get(1L));
        assertThat(head.pendingDiff().isEmpty()).isFalse();

        // Except membership: a node that joins is published, with the pinned rules.
        ClusterHead.Step joined = step(NODE_B);
        assertThat(joined.newVersion()).isTrue();
        assertThat(joined.diff().fragments()).isEmpty();
        assertThat(joined.diff().nodes()).extracting(RulesDiff.NodeChange::node).containsExactly("node-b");
        assertThat(head.version()).isEqualTo(5);
        assertThat(head.published().fragments()).isEqualTo(stored.get(1L).fragments());
        assertThat(head.published()
                        .ruleSet("node-b", IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .contains("10.244.0.10:8080")
                .doesNotContain("10.244.0.20:8080");

        // Resume publishes the current state: what an unpinned cluster would run.
        ClusterHead.Step resumed = step(resume());
        assertThat(resumed.newVersion()).isTrue();
        assertThat(head.version()).isEqualTo(6);
        assertThat(head.pin()).isNull();
        assertThat(head.pendingDiff().isEmpty()).isTrue();
        ClusterHead neverPinned = ClusterHead.empty(C);
        for (List<ClusterEvent> b :
                List.of(List.of(NODE_A, WEB, slice("10.244.0.10")), List.of(slice("10.244.0.20"), NODE_B))) {
            neverPinned = neverPinned.apply(b).next();
        }
        assertThat(head.published()).isEqualTo(neverPinned.published());

        // And changes flow again.
        assertThat(step(slice("10.244.0.21")).newVersion()).isTrue();
    }

    @Test
    void aRollbackToTheCurrentRulesIsStillAVersionSoTheHistoryShowsIt() {
        ClusterHead.Step s = step(rollback(3));
        assertThat(s.newVersion()).isTrue();
        assertThat(s.diff().isEmpty()).isTrue();
        assertThat(head.version()).isEqualTo(4);
    }

    @Test
    void refusedActionsChangeNothing() {
        ClusterHead before = head;
        ClusterHead.Step s = step(rollback(9), resume());
        assertThat(s.newVersion()).isFalse();
        assertThat(head).isEqualTo(before);
        assertThat(s.actions())
                .extracting(ClusterHead.ActionOutcome::refusal)
                .containsExactly(
                        "version 9 does not exist (the latest is 3)",
                        "the cluster is not pinned: there is nothing to resume");
    }

    @Test
    void actionsAndEventsInOneBatchApplyInLogOrder() {
        // rollback, a change (held), a second rollback, another change: pinned to v2, both changes compiled.
        ClusterHead.Step s = step(rollback(1), slice("10.244.0.30"), rollback(2), NODE_B);
        assertThat(s.newVersion()).isTrue();
        assertThat(head.published().fragments()).isEqualTo(stored.get(2L).fragments());
        assertThat(head.published().nodes()).containsOnlyKeys("node-a", "node-b");
        assertThat(head.pin()).isEqualTo(new ClusterHead.Pin(2, 2));
        // rollback then resume in one batch: one version, with the current state.
        ClusterHead.Step both = step(rollback(1), resume());
        assertThat(both.actions()).allMatch(ClusterHead.ActionOutcome::accepted);
        assertThat(head.pin()).isNull();
        assertThat(head.pendingDiff().isEmpty()).isTrue();
    }

    @Test
    void aRestartWhilePinnedStaysPinned() {
        List<ClusterEvent> log = new ArrayList<>(
                List.of(NODE_A, WEB, slice("10.244.0.10"), slice("10.244.0.10", "10.244.0.11"), slice("10.244.0.12")));
        RollbackRequested r = rollback(1);
        step(r);
        step(slice("10.244.0.40"));
        log.add(r);
        log.add(slice("10.244.0.40"));
        ClusterHead rebuilt = ClusterHead.rebuilt(C, log, head.version(), head.published(), head.pin(), head.lineage());
        assertThat(rebuilt).isEqualTo(head);
        assertThat(rebuilt.apply(List.of(slice("10.244.0.41")), history).newVersion())
                .isFalse();
    }
}
