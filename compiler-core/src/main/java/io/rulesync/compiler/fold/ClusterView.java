package io.rulesync.compiler.fold;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterSettings;
import java.util.Objects;

/** Everything the events of one cluster have said so far: its objects and its proxy settings. */
public record ClusterView(ClusterState state, ClusterSettings settings) {
    public static final ClusterView EMPTY = new ClusterView(ClusterState.empty(), ClusterSettings.DEFAULT);

    public ClusterView {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(settings, "settings");
    }
}
