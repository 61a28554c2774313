package io.rulesync.api.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.NodeProgress;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConvergenceTest {
    private static final Instant T0 = Instant.parse("2026-11-29T12:00:00Z");

    private static NodeProgress status(String node, long running, long last, NodeAck.Status s) {
        return new NodeProgress(node, running, s == NodeAck.Status.FAILED);
    }

    @Test
    void eachNodeStandsAgainstTheNewestVersion() {
        // Version v was created at T0 + v minutes; now is T0 + 10 minutes; the newest version is 7.
        List<Convergence.NodeState> s = Convergence.of(
                7,
                Set.of("a", "b", "c", "d"),
                List.of(
                        status("a", 7, 7, NodeAck.Status.APPLIED), status("b", 5, 5, NodeAck.Status.APPLIED),
                        status("c", 6, 7, NodeAck.Status.FAILED), status("gone", 3, 3, NodeAck.Status.APPLIED)),
                v -> T0.plusSeconds(60 * v),
                T0.plusSeconds(600));
        assertThat(s).extracting(Convergence.NodeState::node).containsExactly("a", "b", "c", "d", "gone");
        assertThat(s)
                .extracting(Convergence.NodeState::state)
                .containsExactly(
                        Convergence.State.CONVERGED,
                        Convergence.State.BEHIND,
                        Convergence.State.FAILED,
                        Convergence.State.UNKNOWN,
                        Convergence.State.BEHIND);
        assertThat(s).extracting(Convergence.NodeState::behindVersions).containsExactly(0L, 2L, 1L, 7L, 4L);
        // b lacks version 6 (created at minute 6): behind for 4 minutes; d never acked: behind since version 1.
        assertThat(s).extracting(Convergence.NodeState::lagSeconds).containsExactly(0L, 240L, 180L, 540L, 360L);
        assertThat(s).extracting(Convergence.NodeState::inCluster).containsExactly(true, true, true, true, false);
    }
}
