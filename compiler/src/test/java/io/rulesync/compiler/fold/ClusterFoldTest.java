package io.rulesync.compiler.fold;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClusterFoldTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private static final List<Node.NodeAddress> ADDRESSES =
            List.of(new Node.NodeAddress("InternalIP", IpAddress.parse("10.1.0.1")));

    private static ClusterFold.Folded fold(ClusterView view, Node n) {
        return ClusterFold.apply(view, new ObjectUpserted("a", n, "1", T));
    }

    @Test
    void labelsTheRulesDoNotReadAreKeptWithoutCompilingAgain() {
        ClusterView v = fold(ClusterView.EMPTY, Node.labelled("n1", Map.of("pool", "a"), ADDRESSES))
                .view();

        ClusterFold.Folded relabelled = fold(v, Node.labelled("n1", Map.of("pool", "b"), ADDRESSES));
        assertThat(relabelled.view().state().node("n1").orElseThrow().labels()).containsEntry("pool", "b");
        assertThat(relabelled.changes()).as("nothing to compile").isEqualTo(Changes.NONE);

        ClusterFold.Folded rezoned =
                fold(v, Node.labelled("n1", Map.of("pool", "a", "topology.kubernetes.io/zone", "z1"), ADDRESSES));
        assertThat(rezoned.changes().nodes())
                .as("the zone is read by topology-aware rules")
                .isTrue();

        assertThat(fold(v, Node.labelled("n1", Map.of("pool", "a"), ADDRESSES)).changes())
                .isEqualTo(Changes.NONE);
    }
}
