package io.rulesync.api.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.rollout.RolloutStep.NodeReport;
import io.rulesync.api.rollout.RolloutStep.Step;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RolloutStepTest {
    private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
    private static final RolloutPolicy POLICY = RolloutPolicy.fromJson("""
            {"waves": [{"name": "canary", "nodes": ["c1", "c2"], "bake": "60s"}, {"name": "rest", "percent": 100, "bake": "30s"}],
             "failWhen": {"unacked": 0.25, "ackTimeout": "2m"}}""");
    private static final Waves WAVES = Waves.assign(POLICY, "shop", nodes(), Map.of());
    private static final java.util.function.LongPredicate NONE = v -> false;

    private static Map<String, String> nodes() {
        Map<String, String> m = new TreeMap<>();
        for (String n : new String[] {"c1", "c2", "r1", "r2", "r3", "r4"}) {
            m.put(n, "");
        }
        return m;
    }

    private static Map<String, NodeReport> running(long v, String... nodes) {
        Map<String, NodeReport> m = new HashMap<>();
        for (String n : nodes) {
            m.put(n, new NodeReport(v, null, null));
        }
        return m;
    }

    @Test
    void aGoodVersionOpensEachWaveOnceTheLastHasAckedAndBaked() {
        Rollout settled = Rollout.settled("shop", 4, T0);
        assertThat(RolloutStep.next(settled, POLICY, WAVES, Map.of(), NONE, 4, 0, T0))
                .isInstanceOf(Step.None.class);
        Step.Start start = (Step.Start) RolloutStep.next(settled, POLICY, WAVES, Map.of(), NONE, 5, 0, T0);
        Rollout r = start.rollout();
        assertThat(r.version()).isEqualTo(5);
        assertThat(r.stable()).isEqualTo(4);
        assertThat(r.releasedTo(0)).isEqualTo(5);
        assertThat(r.releasedTo(1)).isEqualTo(4);

        // Acked but not baked; then baked but one canary not acked (a quarter of two nodes is none).
        Map<String, NodeReport> acked = running(5, "c1", "c2");
        assertThat(RolloutStep.next(r, POLICY, WAVES, acked, NONE, 5, 0, T0.plusSeconds(59)))
                .isInstanceOf(Step.None.class);
        assertThat(RolloutStep.next(r, POLICY, WAVES, running(5, "c1"), NONE, 5, 0, T0.plusSeconds(61)))
                .isInstanceOf(Step.None.class);
        Step.Advance open = (Step.Advance) RolloutStep.next(r, POLICY, WAVES, acked, NONE, 5, 0, T0.plusSeconds(61));
        r = open.rollout();
        assertThat(open.why()).isEqualTo("wave 'canary' baked 60 s with 2 of 2 nodes acknowledged; wave 'rest' opens");
        assertThat(r.wave()).isEqualTo(1);
        assertThat(r.releasedTo(1)).isEqualTo(5);
        assertThat(RolloutStep.bakeLeft(r, POLICY, T0.plusSeconds(81))).isEqualTo(Duration.ofSeconds(10));

        // Three of four of the rest is within the allowed quarter.
        Map<String, NodeReport> most = running(5, "c1", "c2", "r1", "r2", "r3");
        Step.Advance done = (Step.Advance) RolloutStep.next(r, POLICY, WAVES, most, NONE, 5, 0, T0.plusSeconds(92));
        assertThat(done.rollout().state()).isEqualTo(Rollout.State.COMPLETE);
        assertThat(done.rollout().releasedTo(1)).isEqualTo(5);
        assertThat(done.why()).endsWith("every wave has version 5");
    }

    @Test
    void aNewVersionWaitsForTheRollingOneButARollbackSupersedesIt() {
        Rollout r = ((Step.Start)
                        RolloutStep.next(Rollout.settled("shop", 4, T0), POLICY, WAVES, Map.of(), NONE, 5, 0, T0))
                .rollout();
        // 6, an ordinary change, waits for 5 to go out to every wave.
        assertThat(RolloutStep.next(r, POLICY, WAVES, running(5, "c1", "c2"), NONE, 6, 0, T0.plusSeconds(10)))
                .isInstanceOf(Step.None.class);
        // 7 is an operator's rollback: it starts now, from the canaries, and the rest keep what completed every wave
        // (4).
        Step.Start back =
                (Step.Start) RolloutStep.next(r, POLICY, WAVES, running(5, "c1", "c2"), NONE, 7, 7, T0.plusSeconds(10));
        assertThat(back.rollout().version()).isEqualTo(7);
        assertThat(back.rollout().stable()).isEqualTo(4);
        assertThat(back.rollout().wave()).isZero();
        assertThat(back.why())
                .isEqualTo("version 7 is a rollback: it supersedes version 5, which was still rolling out");
        // Paused the same; and a rollback older than the rolling version is history.
        Rollout paused = r.with(Rollout.State.PAUSED, 0, T0, "paused by otto: look");
        assertThat(RolloutStep.next(paused, POLICY, WAVES, Map.of(), NONE, 8, 7, T0.plusSeconds(10)))
                .isInstanceOf(Step.Start.class);
        assertThat(RolloutStep.next(r, POLICY, WAVES, Map.of(), NONE, 6, 3, T0.plusSeconds(10)))
                .isInstanceOf(Step.None.class);
    }

    @Test
    void aFailedAckInAnOpenedWaveHaltsTheVersionThere() {
        Rollout r = ((Step.Start)
                        RolloutStep.next(Rollout.settled("shop", 4, T0), POLICY, WAVES, Map.of(), NONE, 5, 0, T0))
                .rollout();
        Map<String, NodeReport> reports = running(5, "c1");
        reports.put("c2", new NodeReport(4, 5L, "iptables-restore: line 7 failed"));
        Step.Fail fail = (Step.Fail) RolloutStep.next(r, POLICY, WAVES, reports, NONE, 5, 0, T0.plusSeconds(3));
        assertThat(fail.why()).isEqualTo("1 node failed version 5: c2 (iptables-restore: line 7 failed)");
        assertThat(fail.nodes()).containsExactly("c2");
        Rollout halted = fail.rollout();
        assertThat(halted.state()).isEqualTo(Rollout.State.HALTED);
        assertThat(halted.releasedTo(1))
                .as("the rest keep the previous version")
                .isEqualTo(4);
        assertThat(RolloutStep.next(halted, POLICY, WAVES, reports, NONE, 5, 0, T0.plusSeconds(600)))
                .isInstanceOf(Step.None.class);

        // A newer version (a fix) supersedes it and starts from the canaries, the rest still on 4.
        Step.Start fix = (Step.Start) RolloutStep.next(halted, POLICY, WAVES, reports, NONE, 6, 0, T0.plusSeconds(700));
        assertThat(fix.rollout().version()).isEqualTo(6);
        assertThat(fix.rollout().stable()).isEqualTo(4);
        assertThat(fix.why()).isEqualTo("version 6 supersedes halted version 5");
        // c2 still reports its failure of 5 (agents retry a version they could not apply): that was 5's rollout, not
        // 6's.
        assertThat(RolloutStep.next(fix.rollout(), POLICY, WAVES, reports, v -> v == 5, 6, 0, T0.plusSeconds(701)))
                .isInstanceOf(Step.None.class);
        assertThat(RolloutStep.next(fix.rollout(), POLICY, WAVES, reports, NONE, 6, 0, T0.plusSeconds(701)))
                .isInstanceOf(Step.Fail.class);

        // A failure of a version before the stable one is history, not this rollout's.
        Map<String, NodeReport> old = running(5, "c1");
        old.put("c2", new NodeReport(5, 3L, "long ago"));
        assertThat(RolloutStep.next(r, POLICY, WAVES, old, NONE, 5, 0, T0.plusSeconds(3)))
                .isInstanceOf(Step.None.class);
    }

    @Test
    void aWaveThatDoesNotAcknowledgeInTimeFailsAndANewerHeadWaits() {
        Rollout r = ((Step.Start)
                        RolloutStep.next(Rollout.settled("shop", 4, T0), POLICY, WAVES, Map.of(), NONE, 5, 0, T0))
                .rollout();
        assertThat(RolloutStep.next(r, POLICY, WAVES, running(5, "c1"), NONE, 9, 0, T0.plusSeconds(119)))
                .as("a newer head waits for the version rolling out")
                .isInstanceOf(Step.None.class);
        Step.Fail fail =
                (Step.Fail) RolloutStep.next(r, POLICY, WAVES, running(5, "c1"), NONE, 9, 0, T0.plusSeconds(120));
        assertThat(fail.why())
                .isEqualTo("1 of 2 nodes of wave 'canary' did not acknowledge version 5 within 120 s: c2");
    }

    @Test
    void aPausedRolloutOpensNothingUntilPromoted() {
        Rollout r = ((Step.Start)
                        RolloutStep.next(Rollout.settled("shop", 4, T0), POLICY, WAVES, Map.of(), NONE, 5, 0, T0))
                .rollout();
        Rollout paused = r.with(Rollout.State.PAUSED, 0, r.waveOpenedAt(), "paused by otto: watching");
        assertThat(RolloutStep.next(paused, POLICY, WAVES, running(5, "c1", "c2"), NONE, 5, 0, T0.plusSeconds(600)))
                .isInstanceOf(Step.None.class);
        Step.Advance promoted = RolloutStep.advance(paused, POLICY, T0.plusSeconds(601), "promoted by otto");
        assertThat(promoted.rollout().state()).isEqualTo(Rollout.State.ROLLING);
        assertThat(promoted.rollout().wave()).isEqualTo(1);
        assertThat(promoted.rollout().revision()).isEqualTo(paused.revision() + 1);
    }
}
