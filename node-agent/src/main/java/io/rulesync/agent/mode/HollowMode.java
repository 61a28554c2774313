package io.rulesync.agent.mode;

import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.rules.Unit;
import java.time.Instant;
import java.util.Set;

/**
 * A kernel that costs nothing, for fleet benchmarks, as kubemark's hollow nodes: the agent around it is the
 * real one (its feed, snapshots, validation of every fragment, version sequencing, gaps closed, acks), and only
 * programming a kernel is left out, so that many agents on one machine measure the control plane and the fan-out, not
 * the machine's cores pretending to be nodes. Acks say {@code hollow} and report no rules: a node's own apply time is
 * measured by full agents beside it.
 */
public final class HollowMode implements KernelMode {
    public static final String MODE = "hollow";

    @Override
    public String mode() {
        return MODE;
    }

    /** Nothing survives a restart: a hollow agent starts from a snapshot, as a node without state would. */
    @Override
    public boolean canResume() {
        return false;
    }

    @Override
    public boolean holds(NodeView v) {
        return false;
    }

    @Override
    public Applied apply(NodeView from, NodeView to, Set<Unit> touched) {
        return new Applied(null, 0, MODE);
    }

    @Override
    public DriftCheck.Result verify(NodeView running) {
        return NOTHING;
    }

    @Override
    public DriftCheck.Result between(NodeView running, Instant now) {
        return NOTHING;
    }
}
