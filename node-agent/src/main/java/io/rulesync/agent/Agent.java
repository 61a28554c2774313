package io.rulesync.agent;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.NarrowedChange;
import io.rulesync.agent.apply.OwnedChains;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.conntrack.StaleFlows;
import io.rulesync.agent.feed.AckSink;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.feed.SnapshotUnavailableException;
import io.rulesync.agent.ipvs.IpvsApplier;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.rules.FragmentCheck;
import io.rulesync.agent.rules.RejectedRuleException;
import io.rulesync.agent.rules.RuleGrammar;
import io.rulesync.agent.state.StateFile;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A node agent's decisions, single-threaded and free of Kafka: which version to apply and from
 * what, when to take a snapshot, when to retry after a failure, when to check for drift, and what
 * to acknowledge. {@link AgentLoop} feeds it deltas and time.
 *
 * <p>The kernel is trusted to hold {@link #running()} exactly; when that is in doubt (start-up
 * without state, a failed full apply, a flushed table) the next apply is a full one.
 */
public final class Agent {
    private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    private static final Duration MAX_RETRY = Duration.ofMinutes(2);

    private final String cluster;
    private final String node;
    private final SnapshotSource snapshots;
    private final Applier applier;
    private final AckSink acks;
    private final StateFile state;
    private final Clock clock;
    private final Consumer<String> log;
    private final Duration verifyEvery;
    private final DriftCheck drift;
    private final int chainsPerCheck;
    private final Conntrack conntrack;

    /** What the kernel holds, or null when unknown. Volatile: the metrics endpoint reads it from its own thread. */
    private volatile NodeView running;
    /** Why this agent applies nothing at all (its mode cannot run here), or null. */
    private String standingRefusal;
    /** How many rules {@link #running} has on this node, or -1 when not known. */
    private int runningRules = -1;
    private Instant retryAt;
    private Duration retryDelay = FIRST_RETRY;
    private Instant verifyAt;
    private Instant sampleAt;
    private FragmentKey sampleCursor;
    private final AtomicLong applies = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong applyMillis = new AtomicLong();
    /** How often draining real servers are looked at between checks (kube-proxy: every minute). */
    private static final Duration SETTLE_EVERY = Duration.ofSeconds(5);
    private IpvsApplier ipvs;
    private Instant settleAt;

    public Agent(String cluster, String node, SnapshotSource snapshots, Applier applier, AckSink acks, StateFile state,
            Clock clock, Duration verifyEvery, int chainsPerCheck, Conntrack conntrack, Consumer<String> log) {
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.node = Objects.requireNonNull(node, "node");
        this.snapshots = snapshots;
        this.applier = applier;
        this.acks = acks;
        this.state = state;
        this.clock = clock;
        this.verifyEvery = verifyEvery;
        this.drift = new DriftCheck(chainsPerCheck);
        this.chainsPerCheck = chainsPerCheck;
        this.conntrack = conntrack;
        this.log = log;
    }

    /** The version the kernel holds, or -1 when unknown. */
    public long running() {
        return running == null ? -1 : running.version();
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
        return ipvs == null ? 0 : ipvs.draining();
    }

    /** Total time spent in successful applies, validation included. */
    public long applyMillis() {
        return applyMillis.get();
    }

    /**
     * From now on, apply nothing and answer every version with a FAILED ack giving {@code reason}
     * (retried with the usual back-off, so the api keeps showing it): the agent was configured to
     * refuse rather than run in a mode other than the one asked for. Call before {@link #start}.
     */
    public void refuseEverything(String reason) {
        standingRefusal = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Program IPVS mode with {@code ipvs} instead of iptables mode: the same versions, acks and
     * retries, but each version's IPVS configuration is applied, and checks reconcile the kernel
     * with it. Call before {@link #start}.
     */
    public void programIpvs(IpvsApplier ipvs) {
        this.ipvs = Objects.requireNonNull(ipvs, "ipvs");
    }

    /** What acks say this agent programs. */
    private String mode() {
        return ipvs != null ? ipvs.mode() : applier.mode();
    }

    /**
     * Start-up: load the latest version. If the state file names the version an earlier run
     * applied and the kernel still has the canary, that version's snapshot is what the kernel holds
     * and the move to the latest is incremental; otherwise it is a full apply.
     */
    public void start() {
        OptionalLong previous = ipvs != null ? OptionalLong.empty() : state.read(); // IPVS applies reconcile with the kernel anyway
        if (previous.isPresent()) {
            try {
                RulesSnapshot s = snapshots.at(cluster, node, previous.getAsLong());
                NodeView v = NodeView.of(s, node);
                if (v.knowsNode() && canaryPresent(ruleSets(v).keySet())) {
                    running = v;
                    log.accept("kernel holds version " + v.version() + " from an earlier run");
                }
            } catch (SnapshotUnavailableException e) {
                log.accept("snapshot of the version applied before (" + previous.getAsLong() + ") is unavailable, applying in full: "
                        + e.getMessage());
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
                if (retryAt == null || !clock.instant().isBefore(retryAt)) {
                    resync("no version applied yet");
                }
                continue;
            }
            if (d.target() <= base.version()) {
                continue; // redelivered
            }
            String refused = standingRefusal != null ? standingRefusal : refusal(d);
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
                if (retryAt != null && clock.instant().isBefore(retryAt)) {
                    continue; // backing off after a failure; tick() retries
                }
                resync(n.reason());
            }
        }
        applyAhead(ahead, touched);
    }

    private void applyAhead(NodeView ahead, Set<Unit> touched) {
        if (ahead != null && running != null) {
            apply(running, ahead, new TreeSet<>(touched));
        }
        touched.clear();
    }

    /**
     * Time passes: retry after a failure when due; every {@code verifyEvery} check the canary, the
     * jumps and the shared chains; every second read back a few of the per-Service chains in turn
     * (so that all of them are read over time without stalling applies).
     */
    public void tick() {
        Instant now = clock.instant();
        if (retryAt != null && !now.isBefore(retryAt)) {
            resync("retry after failure");
            return;
        }
        if (running == null || standingRefusal != null) {
            return; // nothing of ours to verify, or not ours to touch
        }
        if (ipvs != null) {
            if (verifyAt == null || !now.isBefore(verifyAt)) {
                verify();
            } else if (ipvs.draining() > 0 && (settleAt == null || !now.isBefore(settleAt))) {
                settleAt = now.plus(SETTLE_EVERY);
                IpvsApplier.Outcome o = ipvs.settle(now);
                if (!o.ok()) {
                    log.accept("could not delete drained real servers: " + o.error());
                } else if (o.ipvsCommands() > 0) {
                    log.accept("deleted " + o.ipvsCommands() + " drained real servers, " + ipvs.draining() + " still draining");
                }
            }
            return;
        }
        if (verifyAt == null || !now.isBefore(verifyAt)) {
            verifyAt = now.plus(verifyEvery);
            report(drift.check(applier, sharedChains(ruleSets(running))));
        } else if (sampleAt == null || !now.isBefore(sampleAt)) {
            sampleAt = now.plusSeconds(1);
            int perSecond = (int) Math.max(1, chainsPerCheck * 1000L / Math.max(1, verifyEvery.toMillis()));
            report(DriftCheck.sample(applier, nextChains(perSecond)));
        }
    }

    /** Checks the canary, the jumps and the next {@code chainsPerCheck} owned chains now, and repairs drift. */
    public DriftCheck.Result verify() {
        verifyAt = clock.instant().plus(verifyEvery);
        if (running == null) {
            return new DriftCheck.Result(false, 0, 0, List.of("no version applied"));
        }
        if (ipvs != null) {
            return reconcileIpvs();
        }
        DriftCheck.Result r = drift.check(applier, ruleSets(running));
        report(r);
        return r;
    }

    private void report(DriftCheck.Result r) {
        if (r.canaryMissing()) {
            log.accept("drift: " + String.join("; ", r.problems()) + "; applying version " + running.version() + " in full");
            NodeView v = running;
            running = null;
            repairs.incrementAndGet();
            apply(null, v, null);
        } else if (r.repaired() > 0 || !r.problems().isEmpty()) {
            repairs.addAndGet(r.repaired());
            log.accept("drift repaired (" + r.repaired() + "): " + String.join("; ", r.problems()));
        }
    }

    /** The chains many units share (dispatch and fixed chains): read at every check. */
    private static Map<IpFamily, RuleSet> sharedChains(Map<IpFamily, RuleSet> all) {
        Map<IpFamily, RuleSet> out = new EnumMap<>(IpFamily.class);
        all.forEach((f, rs) -> out.put(f, new RuleSet(f, rs.filter(),
                rs.nat().stream().filter(c -> !RuleGrammar.isPerServiceChain(c.name())).toList())));
        return out;
    }

    /** The next n per-Service chains of the running version, from where the last sample stopped. */
    private List<DriftCheck.Slot> nextChains(int n) {
        List<DriftCheck.Slot> out = new java.util.ArrayList<>();
        java.util.SortedMap<FragmentKey, RuleFragment> all = running.rules().fragments();
        if (all.isEmpty()) {
            return out;
        }
        FragmentKey from = sampleCursor == null || all.tailMap(sampleCursor).isEmpty() ? all.firstKey() : sampleCursor;
        FragmentKey previous = null;
        for (FragmentKey k : all.tailMap(from).keySet()) {
            if (out.size() >= n) {
                sampleCursor = k;
                return out;
            }
            if (previous != null && previous.family() == k.family() && previous.unit().equals(k.unit())) {
                continue; // another node class of the same unit
            }
            previous = k;
            if (applier.families().contains(k.family()) && k.unit() instanceof Unit.Port) {
                running.rules().resolve(node, k.family(), k.unit()).ifPresent(f -> f.natChains()
                        .forEach(c -> out.add(new DriftCheck.Slot(k.family(), Table.NAT, c))));
            }
        }
        sampleCursor = null; // the end: start over next time
        return out;
    }

    private void resync(String why) {
        RulesSnapshot latest;
        try {
            latest = snapshots.latest(cluster, node);
        } catch (SnapshotUnavailableException e) {
            log.accept("cannot load the latest version (" + why + "): " + e.getMessage());
            backOff();
            return;
        }
        NodeView target = NodeView.of(latest, node);
        if (running != null && target.version() <= running.version()) {
            retryAt = null;
            return;
        }
        String refused = standingRefusal != null ? standingRefusal : refusal(target);
        if (refused != null) {
            refuse(target.version(), refused);
            return;
        }
        log.accept("loading version " + target.version() + " (" + why + ")");
        apply(running, target, null);
    }

    /**
     * IPVS mode's drift check: apply the running version again. Every step compares with the kernel,
     * so this changes only what drifted (and deletes real servers that finished draining).
     */
    private DriftCheck.Result reconcileIpvs() {
        IpvsApplier.Outcome o = ipvs.apply(ipvsRules(running), clock.instant(), true);
        if (!o.ok()) {
            log.accept("drift: could not reconcile IPVS mode with version " + running.version() + ": " + o.error());
            return new DriftCheck.Result(false, 0, 0, List.of(o.error()));
        }
        if (o.changes() > 0) {
            repairs.addAndGet(o.changes());
            log.accept("drift repaired (" + o.changes() + "): " + o.setsChanged() + " ipsets, " + o.ipvsCommands() + " IPVS changes, "
                    + o.addressesChanged() + " addresses");
        }
        return new DriftCheck.Result(false, 0, o.changes(), List.of());
    }

    /** The IPVS configuration of this node in each family the kernel takes. */
    private Map<IpFamily, IpvsRules> ipvsRules(NodeView v) {
        Map<IpFamily, IpvsRules> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : families(v)) {
            v.rules().ipvs(node, f).ifPresent(r -> out.put(f, r));
        }
        return out;
    }

    private void applyIpvs(NodeView from, NodeView to, Set<Unit> touched) {
        long t0 = System.nanoTime();
        Map<IpFamily, IpvsRules> target = ipvsRules(to);
        IpvsApplier.Outcome o = ipvs.apply(target, clock.instant(), false);
        if (!o.ok()) {
            fail(to, from, t0, o.error());
            return;
        }
        int rules = 0;
        for (IpvsRules r : target.values()) {
            rules += r.iptablesRuleCount() + r.virtualServers().size() + r.realServerCount();
        }
        if (from != null && touched != null) {
            clearStaleFlows(from, to, touched); // the same endpoints went away in either mode
        }
        succeeded(to, t0, rules, o.changes() + " changes");
    }

    /**
     * Applies {@code to}. With {@code touched} (the units a delta changed for this node) only their
     * chains and, where their share changed, the dispatch chains are compared; otherwise whole rule sets.
     */
    private void apply(NodeView from, NodeView to, Set<Unit> touched) {
        long t0 = System.nanoTime();
        if (!to.knowsNode()) {
            fail(to, from, t0, "node " + node + " is not a node of cluster " + cluster + " at version " + to.version());
            return;
        }
        if (ipvs != null) {
            applyIpvs(from, to, touched);
            return;
        }
        Map<IpFamily, RuleSet> before;
        Map<IpFamily, RuleSet> after;
        int rules;
        if (from != null && touched != null && runningRules >= 0) {
            before = new EnumMap<>(IpFamily.class);
            after = new EnumMap<>(IpFamily.class);
            rules = runningRules;
            for (IpFamily f : families(to)) {
                NarrowedChange n = NarrowedChange.of(from.rules(), to.rules(), node, f, touched);
                before.put(f, n.before());
                after.put(f, n.after());
                rules += n.after().ruleCount() - n.before().ruleCount();
            }
        } else {
            before = from == null ? null : ruleSets(from);
            after = ruleSets(to);
            rules = after.values().stream().mapToInt(RuleSet::ruleCount).sum();
        }
        Applier.Outcome o = applier.apply(before, after);
        if (!o.ok()) {
            if (from == null) {
                state.clear();
            }
            fail(to, from, t0, o.error());
            return;
        }
        if (from != null && touched != null) {
            clearStaleFlows(from, to, touched);
        }
        succeeded(to, t0, rules, from == null ? "full" : o.restoreLines() + " lines");
    }

    private void succeeded(NodeView to, long t0, int rules, String what) {
        running = to;
        runningRules = rules;
        retryAt = null;
        retryDelay = FIRST_RETRY;
        state.write(to.version(), mode());
        long ms = millisSince(t0);
        applyMillis.addAndGet(ms);
        applies.incrementAndGet();
        acks.publish(new NodeAck(cluster, node, to.version(), to.version(), NodeAck.Status.APPLIED, null,
                ms, rules, mode(), clock.instant()));
        log.accept("applied version " + to.version() + " (" + what + ", " + ms + " ms, " + rules + " rules)");
        if (verifyAt == null) {
            verifyAt = clock.instant().plus(verifyEvery);
        }
    }

    /** UDP conntrack entries the change made stale (kube-proxy's CleanStaleEntries), after the rules are in place. */
    private void clearStaleFlows(NodeView from, NodeView to, Set<Unit> touched) {
        for (IpFamily f : families(to)) {
            List<StaleFlows.Flush> flushes = new java.util.ArrayList<>();
            for (Unit u : touched) {
                flushes.addAll(StaleFlows.between(f, u, from.rules().resolve(node, f, u).orElse(RuleFragment.EMPTY),
                        to.rules().resolve(node, f, u).orElse(RuleFragment.EMPTY)));
            }
            if (!flushes.isEmpty()) {
                conntrack.flush(f, flushes);
            }
        }
    }

    /** Why a delta must not reach the kernel, or null: every fragment it carries must be one the compiler emits. */
    private static String refusal(RulesDelta d) {
        for (RulesDiff.FragmentChange c : d.diff().fragments()) {
            String r = c.after() == null ? null : refusal(c.key(), c.after());
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    private static String refusal(NodeView v) {
        for (Map.Entry<FragmentKey, RuleFragment> e : v.rules().fragments().entrySet()) {
            String r = refusal(e.getKey(), e.getValue());
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    private static String refusal(FragmentKey key, RuleFragment f) {
        try {
            FragmentCheck.check(key.family(), f);
            return null;
        } catch (RejectedRuleException e) {
            return "refused " + key.unit().id() + " (" + key.family().id() + "): " + e.getMessage();
        }
    }

    private void refuse(long version, String why) {
        failures.incrementAndGet();
        log.accept("version " + version + " refused, node keeps " + (running == null ? "no known version" : "version " + running.version())
                + ": " + why);
        acks.publish(new NodeAck(cluster, node, version, running == null ? 0 : running.version(), NodeAck.Status.FAILED, why,
                0, 0, mode(), clock.instant()));
        backOff();
    }

    private void fail(NodeView to, NodeView from, long t0, String error) {
        failures.incrementAndGet();
        if (from != running) {
            runningRules = -1;
        }
        running = from;
        log.accept("version " + to.version() + " not applied, node keeps " + (from == null ? "no known version" : "version " + from.version())
                + ": " + error);
        acks.publish(new NodeAck(cluster, node, to.version(), from == null ? 0 : from.version(), NodeAck.Status.FAILED, error,
                millisSince(t0), 0, mode(), clock.instant()));
        backOff();
    }

    /** Never a tight loop: 1 s, 2 s, 4 s, ... up to 2 minutes between attempts. */
    private void backOff() {
        retryAt = clock.instant().plus(retryDelay);
        Duration next = retryDelay.multipliedBy(2);
        retryDelay = next.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : next;
    }

    /** The rule sets of the families this node's kernel takes (those the cluster has rules of). */
    private Map<IpFamily, RuleSet> ruleSets(NodeView v) {
        Map<IpFamily, RuleSet> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : families(v)) {
            v.ruleSet(f).ifPresent(rs -> out.put(f, rs));
        }
        return out;
    }

    private List<IpFamily> families(NodeView v) {
        return v.rules().families().stream().filter(applier.families()::contains).toList();
    }

    private boolean canaryPresent(Set<IpFamily> families) {
        for (IpFamily f : families) {
            for (Table t : Table.values()) {
                if (applier.netfilter(f).chain(t, OwnedChains.CANARY).isEmpty()) {
                    return false;
                }
            }
        }
        return true;
    }

    private static long millisSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
