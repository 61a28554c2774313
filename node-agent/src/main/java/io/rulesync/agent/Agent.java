package io.rulesync.agent;

import io.rulesync.agent.feed.AckSink;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.feed.SnapshotUnavailableException;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.rules.FragmentCheck;
import io.rulesync.agent.state.StateFile;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Unit;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * A node agent's decisions, single-threaded and free of Kafka: which version to apply and from
 * what, when to take a snapshot, when to retry after a failure, when to check for drift, and what
 * to acknowledge. {@link AgentLoop} feeds it deltas and time; its {@link KernelMode} does the kernel's part.
 *
 * <p>The kernel is trusted to hold {@link #running()} exactly; when that is in doubt (start-up
 * without state, a failed full apply, a flushed table) the next apply is a full one.
 */
public final class Agent {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);

    private final String cluster;
    private final String node;
    private final SnapshotSource snapshots;
    private final KernelMode kernel;
    private final AckSink acks;
    private final StateFile state;
    private final Clock clock;
    private final Duration verifyEvery;
    private final Backoff backoff = new Backoff();

    /** What the kernel holds, or null when unknown. Volatile: the metrics endpoint reads it from its own thread. */
    private volatile NodeView running;

    private Instant verifyAt;
    private final AtomicLong applies = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong applyMillis = new AtomicLong();

    /** @param clock all of the agent's time: back-off, checks, and how long applies take */
    public Agent(
            String cluster,
            String node,
            SnapshotSource snapshots,
            KernelMode kernel,
            AckSink acks,
            StateFile state,
            Clock clock,
            Duration verifyEvery) {
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.node = Objects.requireNonNull(node, "node");
        this.snapshots = snapshots;
        this.kernel = Objects.requireNonNull(kernel, "kernel");
        this.acks = acks;
        this.state = state;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.verifyEvery = verifyEvery;
    }

    public String cluster() {
        return cluster;
    }

    public String node() {
        return node;
    }

    /** The version the kernel holds, or -1 when unknown. */
    public long running() {
        return running == null ? -1 : running.version();
    }

    /** The lineage of {@link #running()} (unknown when none, or when its source gave none). */
    public String runningLineage() {
        NodeView v = running;
        return v == null ? Lineage.UNKNOWN : v.lineage();
    }

    public long applies() {
        return applies.get();
    }

    public long failures() {
        return failures.get();
    }

    public long repairs() {
        return repairs.get();
    }

    /** IPVS mode: real servers draining (weight 0) until their connections end; 0 in iptables mode. */
    public int draining() {
        return kernel.draining();
    }

    /** Total time spent in successful applies, validation included. */
    public long applyMillis() {
        return applyMillis.get();
    }

    /**
     * Start-up: load the latest version. If the state file names the version an earlier run
     * applied and the kernel still has it, that version's snapshot is what the kernel holds
     * and the move to the latest is incremental; otherwise it is a full apply.
     */
    public void start() {
        Optional<StateFile.Claim> previous = kernel.canResume() ? state.read() : Optional.empty();
        if (previous.isPresent()) {
            long seq = previous.get().version();
            try {
                NodeView v = NodeView.of(snapshots.at(cluster, node, seq), node);
                if (!Lineage.agree(previous.get().lineage(), v.lineage())) {
                    // The number came again for another history: what the kernel holds is not the stored version.
                    warn(seq)
                            .log(
                                    "the kernel holds version {} of lineage {} from an earlier run, but the stored version {} is of "
                                            + "lineage {} (the control plane's database was restored from a backup); applying in full",
                                    seq,
                                    Lineage.shortForm(previous.get().lineage()),
                                    seq,
                                    Lineage.shortForm(v.lineage()));
                } else if (kernel.holds(v)) {
                    running = v;
                    info(v.version()).log("kernel holds version {} from an earlier run", v.version());
                }
            } catch (SnapshotUnavailableException e) {
                warn(seq)
                        .log(
                                "snapshot of the version applied before ({}) is unavailable, applying in full: {}",
                                seq,
                                e.getMessage());
            }
        }
        resync("start-up");
    }

    /**
     * Deltas in the order received. Consecutive deltas are applied together, as one restore: on
     * iptables-nft every restore pays a fixed cost that grows with the table (~100 ms at 10,000
     * Services), so a burst must not cost one restore per version. The ack names the last version.
     */
    public void onDeltas(List<RulesDelta> deltas) {
        NodeView ahead = null;
        Set<Unit> touched = new TreeSet<>();
        for (RulesDelta d : deltas) {
            NodeView base = ahead != null ? ahead : running;
            if (base == null) {
                if (!backoff.waiting(clock.instant())) {
                    resync("no version applied yet");
                }
                continue;
            }
            if (d.target() <= base.version()) {
                continue; // redelivered
            }
            String refused = kernel.refusal() != null ? kernel.refusal() : FragmentCheck.refusal(d.diff());
            if (refused != null) {
                applyAhead(ahead, touched);
                ahead = null;
                refuse(d.target(), refused);
                continue;
            }
            NodeView.Step step = base.offer(d);
            if (step instanceof NodeView.Advanced a) {
                ahead = a.next();
                touched.addAll(a.touched());
            } else if (step instanceof NodeView.NeedsSnapshot n) {
                applyAhead(ahead, touched);
                ahead = null;
                if (backoff.waiting(clock.instant())) {
                    continue; // backing off after a failure; tick() retries
                }
                resync(n.reason());
            }
        }
        applyAhead(ahead, touched);
    }

    /**
     * The source says deltas were missed that it cannot give (retention removed them, or the node is too far behind):
     * load the latest version, unless backing off after a failure (then {@link #tick} retries).
     */
    public void onGap(String why) {
        if (!backoff.waiting(clock.instant())) {
            resync(why);
        }
    }

    private void applyAhead(NodeView ahead, Set<Unit> touched) {
        if (ahead != null && running != null) {
            apply(running, ahead, new TreeSet<>(touched));
        }
        touched.clear();
    }

    /**
     * Time passes: retry after a failure when due; every {@code verifyEvery} the mode's check;
     * in between, the mode's small work (see {@link KernelMode#between}).
     */
    public void tick() {
        Instant now = clock.instant();
        if (backoff.due(now)) {
            resync("retry after failure");
            return;
        }
        if (running == null || kernel.refusal() != null) {
            return; // nothing of ours to verify, or not ours to touch
        }
        if (verifyAt == null || !now.isBefore(verifyAt)) {
            verifyAt = now.plus(verifyEvery);
            report(kernel.check(running));
        } else {
            report(kernel.between(running, now));
        }
    }

    /** Checks all of the kernel against the running version now, and repairs drift. */
    public DriftCheck.Result verify() {
        verifyAt = clock.instant().plus(verifyEvery);
        if (running == null) {
            return new DriftCheck.Result(false, 0, 0, List.of("no version applied"));
        }
        DriftCheck.Result r = kernel.verify(running);
        report(r);
        return r;
    }

    /** Counts the repairs; a missing canary means the table was flushed, and only a full apply helps. */
    private void report(DriftCheck.Result r) {
        if (r.canaryMissing()) {
            NodeView v = running;
            warn(v.version())
                    .log("drift: {}; applying version {} in full", String.join("; ", r.problems()), v.version());
            running = null;
            repairs.incrementAndGet();
            apply(null, v, null);
        } else {
            repairs.addAndGet(r.repaired());
        }
    }

    private void resync(String why) {
        RulesSnapshot latest;
        NodeView from = running;
        try {
            Optional<RulesSnapshot> newer = from == null
                    ? Optional.of(snapshots.latest(cluster, node))
                    : snapshots.otherThan(cluster, node, from.version(), from.lineage());
            if (newer.isEmpty()) {
                backoff.cancel(); // the node runs the latest version already
                return;
            }
            latest = newer.get();
        } catch (SnapshotUnavailableException e) {
            warn(running()).log("cannot load the latest version ({}): {}", why, e.getMessage());
            backoff.failed(clock.instant());
            return;
        }
        NodeView target = NodeView.of(latest, node);
        if (running != null && !SnapshotSource.replaces(latest, running.version(), running.lineage())) {
            backoff.cancel();
            return;
        }
        String refused = kernel.refusal() != null
                ? kernel.refusal()
                : FragmentCheck.refusal(target.rules().fragments());
        if (refused != null) {
            refuse(target.version(), refused);
            return;
        }
        info(target.version()).log("loading version {} ({})", target.version(), why);
        apply(running, target, null);
    }

    /**
     * Applies {@code to}. With {@code touched} (the units a delta changed for this node) only their
     * chains and, where their share changed, the dispatch chains are compared; otherwise whole rule sets.
     */
    private void apply(NodeView from, NodeView to, Set<Unit> touched) {
        long t0 = clock.millis();
        if (!to.knowsNode()) {
            fail(to, from, t0, "node " + node + " is not a node of cluster " + cluster + " at version " + to.version());
            return;
        }
        // The state file claims what the kernel holds, so it is withdrawn while the kernel changes: killed mid-apply,
        // the
        // kernel may hold the old version, the new one, or part of a full load (written in several restores), and a
        // restart that trusted the old claim would move on from rules the kernel does not hold. Without a claim the
        // restart loads in full (slower, and exact). Written again once the apply succeeded.
        try {
            state.clear();
        } catch (UncheckedIOException e) {
            // The old claim cannot be withdrawn: changing the kernel under it would leave a claim a restart trusts
            // wrongly.
            fail(to, from, t0, "not applied: cannot remove the state file (" + e.getMessage() + ")");
            return;
        }
        KernelMode.Applied o = kernel.apply(from, to, touched);
        if (!o.ok()) {
            fail(to, from, t0, o.error());
            return;
        }
        running = to;
        backoff.succeeded();
        long ms = clock.millis() - t0;
        applyMillis.addAndGet(ms);
        applies.incrementAndGet();
        String unrecorded = null;
        try {
            state.write(to.version(), to.lineage(), kernel.mode());
        } catch (UncheckedIOException e) {
            // The kernel holds the version and no claim says so (a restart loads in full: slower, and exact). The node
            // runs it, but something is wrong with it (a full disk, say): a FAILED ack that says both, and no retry.
            unrecorded = "applied version " + to.version() + ", but cannot record it (" + e.getMessage()
                    + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()) + "); a restart will load in full";
        }
        acks.publish(new NodeAck(
                cluster,
                node,
                to.version(),
                to.version(),
                unrecorded == null ? NodeAck.Status.APPLIED : NodeAck.Status.FAILED,
                unrecorded == null ? null : NodeAck.bounded(unrecorded),
                ms,
                o.rules(),
                NodeAck.boundedMode(kernel.mode()),
                clock.instant()));
        if (unrecorded == null) {
            info(to.version()).log("applied version {} ({}, {} ms, {} rules)", to.version(), o.what(), ms, o.rules());
        } else {
            failures.incrementAndGet();
            warn(to.version()).log("{}", unrecorded);
        }
        if (verifyAt == null) {
            verifyAt = clock.instant().plus(verifyEvery);
        }
    }

    private void refuse(long version, String why) {
        warn(version).log("version {} refused, node keeps {}: {}", version, keeps(running), why);
        failed(version, why, 0);
    }

    private void fail(NodeView to, NodeView from, long t0, String error) {
        running = from;
        warn(to.version()).log("version {} not applied, node keeps {}: {}", to.version(), keeps(from), error);
        failed(to.version(), error, clock.millis() - t0);
    }

    /** A FAILED ack naming the version the node keeps, and a retry after the back-off. */
    private void failed(long version, String error, long ms) {
        failures.incrementAndGet();
        acks.publish(new NodeAck(
                cluster,
                node,
                version,
                running == null ? 0 : running.version(),
                NodeAck.Status.FAILED,
                NodeAck.bounded(error),
                ms,
                0,
                NodeAck.boundedMode(kernel.mode()),
                clock.instant()));
        backoff.failed(clock.instant());
    }

    private static String keeps(NodeView v) {
        return v == null ? "no known version" : "version " + v.version();
    }

    private LoggingEventBuilder info(long version) {
        return log.atInfo()
                .addKeyValue("cluster", cluster)
                .addKeyValue("node", node)
                .addKeyValue("version", version);
    }

    private LoggingEventBuilder warn(long version) {
        return log.atWarn()
                .addKeyValue("cluster", cluster)
                .addKeyValue("node", node)
                .addKeyValue("version", version);
    }
}
