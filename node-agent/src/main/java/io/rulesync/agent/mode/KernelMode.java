package io.rulesync.agent.mode;

import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.rules.Unit;
import java.time.Instant;
import java.util.Set;

/**
 * What a mode does to the node's kernel: iptables mode ({@link IptablesMode}), IPVS mode
 * ({@link IpvsMode}), or nothing at all ({@link RefusingMode}; {@link HollowMode} for fleet benchmarks). Chosen once, when the agent is put
 * together ({@link ModeChoice}); the agent keeps the versions, acks and retries, the mode the kernel.
 */
public interface KernelMode {
    /** What acks say this agent programs: "iptables", "ipvs", "dry-run", with a note if any. */
    String mode();

    /** Why this agent applies nothing at all (its mode cannot run here), or null when it applies. */
    default String refusal() {
        return null;
    }

    /** Whether a version an earlier run applied may be taken as still held ({@link #holds}); false: start with a full apply. */
    boolean canResume();

    /** Whether the kernel still holds {@code v}, applied by an earlier run. */
    boolean holds(NodeView v);

    /**
     * Brings the kernel from {@code from} (what it holds; null: unknown) to {@code to}. With
     * {@code touched} (the units the deltas changed for this node) only those are compared;
     * stale UDP flows of the touched units are cleared after the rules are in place.
     */
    Applied apply(NodeView from, NodeView to, Set<Unit> touched);

    /** What an apply did: {@code error} null when it succeeded; the node's rule count; a few words on the work done. */
    record Applied(String error, int rules, String what) {
        public static Applied failed(String error) {
            return new Applied(error, 0, null);
        }

        public boolean ok() {
            return error == null;
        }
    }

    /** Compares all of the kernel with {@code running} now, and repairs what drifted. */
    DriftCheck.Result verify(NodeView running);

    /** The periodic check, every verify interval: all of it unless the mode spreads the reading over time. */
    default DriftCheck.Result check(NodeView running) {
        return verify(running);
    }

    /** Between checks, at every tick: a mode's small work (reading back a few chains, deleting drained real servers). */
    DriftCheck.Result between(NodeView running, Instant now);

    /** IPVS mode: real servers draining (weight 0) until their connections end; 0 in the other modes. */
    default int draining() {
        return 0;
    }

    /** A check that found nothing to say. */
    DriftCheck.Result NOTHING = new DriftCheck.Result(false, 0, 0, java.util.List.of());
}
