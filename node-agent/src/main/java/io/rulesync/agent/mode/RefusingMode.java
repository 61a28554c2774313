package io.rulesync.agent.mode;

import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.rules.Unit;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * The mode asked for cannot run here and the agent was told to refuse rather than program another
 * ({@code --mode-unavailable=refuse}): nothing reaches the kernel, and the agent answers every
 * version with a FAILED ack giving the reason (retried with its usual back-off, so the api keeps
 * showing it). What an earlier run left is still recognised, so that acks name the version the node keeps.
 */
public final class RefusingMode implements KernelMode {
    private final String reason;
    private final KernelMode kept;

    /** @param kept what the node runs instead, read but never written: its mode is what acks report */
    public RefusingMode(String reason, KernelMode kept) {
        this.reason = Objects.requireNonNull(reason, "reason");
        this.kept = Objects.requireNonNull(kept, "kept");
    }

    @Override
    public String mode() {
        return kept.mode();
    }

    @Override
    public String refusal() {
        return reason;
    }

    @Override
    public boolean canResume() {
        return kept.canResume();
    }

    @Override
    public boolean holds(NodeView v) {
        return kept.holds(v);
    }

    @Override
    public Applied apply(NodeView from, NodeView to, Set<Unit> touched) {
        return Applied.failed(reason);
    }

    /** Not ours to touch. */
    @Override
    public DriftCheck.Result verify(NodeView running) {
        return NOTHING;
    }

    @Override
    public DriftCheck.Result between(NodeView running, Instant now) {
        return NOTHING;
    }
}
