package io.rulesync.agent.feed;

import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesSnapshot;
import java.util.Optional;

/** Where an agent gets whole versions: at start, after a gap, after a failure. */
public interface SnapshotSource {
    /** The newest version of the cluster, cut down to the node. */
    RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException;

    /** A given version of the cluster, cut down to the node. */
    RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException;

    /**
     * The newest version when it is not what the node runs ({@code running} of {@code lineage}): newer, or of another
     * lineage (the control plane's history was restored from a backup: that version may even be older); empty when the
     * node runs it. A source that can (the api, with version and lineage as entity tag) avoids sending what the node
     * already has.
     */
    default Optional<RulesSnapshot> otherThan(String cluster, String node, long running, String lineage)
            throws SnapshotUnavailableException {
        return Optional.of(latest(cluster, node)).filter(s -> replaces(s, running, lineage));
    }

    /** Whether {@code latest} is what a node that runs {@code running} of {@code lineage} should load. */
    static boolean replaces(RulesSnapshot latest, long running, String lineage) {
        return latest.version() > running || !Lineage.agree(lineage, latest.lineage());
    }
}
