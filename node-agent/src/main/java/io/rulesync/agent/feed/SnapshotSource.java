package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesSnapshot;

/** Where an agent gets whole versions: at start, after a gap, after a failure. */
public interface SnapshotSource {
    /** The newest version of the cluster, cut down to the node. */
    RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException;

    /** A given version of the cluster, cut down to the node. */
    RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException;
}
