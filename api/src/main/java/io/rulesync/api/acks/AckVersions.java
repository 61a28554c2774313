package io.rulesync.api.acks;

import io.rulesync.api.deltas.HeadWatch;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.VersionHistory;
import java.util.List;
import java.util.OptionalLong;

/**
 * Refuses an ack that names a version its cluster does not have. A node runs only versions an api served, and every one
 * was stored before it was served; an ack beyond the cluster's newest is a node that lies, or one holding a history this
 * database no longer has (a restore from a backup), and neither may show the node as running it. The watched heads answer
 * almost every ack without a query; one beyond them (another replica served a version this one has not seen announced
 * yet) is checked against PostgreSQL before it is refused, on the acks' own connection ({@link AckConnection}), so that
 * acks never wait for a pool that queries have taken.
 */
public final class AckVersions {
    private final HeadWatch heads;
    private final VersionHistory versions;

    public AckVersions(HeadWatch heads, VersionHistory versions) {
        this.heads = heads;
        this.versions = versions;
    }

    /** Whether every ack names a version at or below its cluster's watched head: true means {@link #refused} is null. */
    public boolean withinWatched(List<NodeAck> acks) {
        if (!heads.ready()) {
            return false;
        }
        for (NodeAck a : acks) {
            OptionalLong watched = heads.head(a.cluster());
            if (watched.isEmpty() || Math.max(a.version(), a.running()) > watched.getAsLong()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why the acks are refused, naming the first at fault ({@code field[i]}), or null when every one names a stored
     * version.
     */
    public String refused(String field, List<NodeAck> acks) {
        for (int i = 0; i < acks.size(); i++) {
            NodeAck a = acks.get(i);
            long named = Math.max(a.version(), a.running());
            OptionalLong watched = heads.ready() ? heads.head(a.cluster()) : OptionalLong.empty();
            if (watched.isPresent() && named <= watched.getAsLong()) {
                continue;
            }
            long stored = versions.head(a.cluster());
            if (named > stored) {
                return field + "[" + i + "]: version " + named + " of cluster '" + a.cluster() + "' does not exist; "
                        + (stored == 0 ? "the cluster has no version" : "its newest is " + stored);
            }
        }
        return null;
    }
}
