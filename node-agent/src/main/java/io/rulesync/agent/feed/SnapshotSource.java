package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesSnapshot;
import java.util.Optional;

/** Where an agent gets whole versions: at start, after a gap, after a failure. */
public interface SnapshotSource {
    /** The newest version of the cluster, cut down to the node. */
    RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException;

    /** A given version of the cluster, cut down to the node. */
    RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException;

    /**
     * The newest version when it is newer than {@code running}, which the node runs; empty when it is not. A source
     * that can (the api, with the version as entity tag) avoids sending what the node already has.
     */
    default Optional<RulesSnapshot> newerThan(String cluster, String node, long running) throws SnapshotUnavailableException {
        RulesSnapshot latest = latest(cluster, node);
        return latest.version() > running ? Optional.of(latest) : Optional.empty();
    }
}
