package io.rulesync.api.rollout;

/**
 * Which versions a node may be served: what the deltas and snapshots that agents read are capped at (staged rollout).
 */
public interface Release {
    /** The newest version {@code node} (null: a reader that names no node) may run, {@code head} being the cluster's newest. */
    long released(String cluster, String node, long head);

    /**
     * A version in {@code (after, upTo)} that was halted by its rollout, if any (null: none): a node moving past it must
     * not apply it on the way, so it loads the snapshot of {@code upTo} instead of the deltas.
     */
    Long withheldBetween(String cluster, long after, long upTo);
}
