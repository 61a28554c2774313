package io.rulesync.store;

import io.rulesync.model.ack.NodeAck;
import java.time.Instant;

/**
 * One node's state as its newest ack reported it (table {@code node_status}).
 *
 * @param running          the version the node's kernel holds (unchanged by a FAILED ack)
 * @param lastVersion      the version the newest ack is about
 * @param lastStatus       the newest ack's status; FAILED means the node is failing now
 * @param lastError        the most recent failure's reason, kept after the node recovers; null: never failed
 * @param lastErrorVersion the version that failure refused; null: never failed
 * @param lastErrorAt      when the api received that failure; null: never failed
 * @param ackedAt          the newest ack's {@code at}, by the node's clock: for display only, it orders nothing
 * @param updatedAt        when the api stored the newest ack, by the api's clock
 */
public record NodeStatus(
        String cluster,
        String node,
        long running,
        long lastVersion,
        NodeAck.Status lastStatus,
        String lastError,
        Long lastErrorVersion,
        Instant lastErrorAt,
        long durationMs,
        int ruleCount,
        String mode,
        Instant ackedAt,
        Instant updatedAt) {

    public boolean failing() {
        return lastStatus == NodeAck.Status.FAILED;
    }
}
