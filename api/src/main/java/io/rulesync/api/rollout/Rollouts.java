package io.rulesync.api.rollout;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rulesync.api.rollout.RolloutStep.NodeReport;
import io.rulesync.api.rollout.RolloutStep.Step;
import io.rulesync.store.ActionConflictException;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.StoreException;
import io.rulesync.store.VersionHistory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives the staged rollouts of every cluster with a policy, and says which version each node may run.
 *
 * <p>{@link #tick} (every second, and when a cluster's head moves) reads each such cluster's rollout, the nodes' acks and
 * the time, asks {@link RolloutStep} what comes next, and stores the step only if the rollout is still what it read (so
 * api replicas deciding at once store one step), logging it. {@link #released} is what the deltas and snapshots served
 * to agents are capped at; after a step, {@code onRelease} wakes the agents waiting for their next version.
 */
public final class Rollouts implements Release {
    private static final Logger log = LoggerFactory.getLogger(Rollouts.class);
    /** The actor of the steps the rollout takes by itself, in the log and the audit. */
    public static final String SELF = "rollout";

    /**
     * One cluster's rollout as this replica last read it, with its nodes' labels when a wave selects by label (read each
     * tick, so a node's wave follows its labels within a second).
     */
    record View(
            RolloutPolicy policy,
            Rollout rollout,
            NavigableSet<Long> halted,
            Map<String, Map<String, String>> labels) {}

    private final RolloutStore store;
    private final VersionHistory versions;
    private final NodeLabelStore nodeLabels;
    private final NodeStatusStore acks;
    private final OperatorActionStore actions;
    private final String eventsTopic;
    private final Clock clock;
    private final Map<String, View> views = new ConcurrentHashMap<>();
    /**
     * A version's node → zone map, weighed by its nodes: room for 100 clusters of 5,000 nodes each
     * rolling one version out over a stable one, so no tick evicts what the next one reads.
     */
    private final Cache<String, Map<String, String>> nodeZones = Caffeine.newBuilder()
            .maximumWeight(1_000_000)
            .weigher((String k, Map<String, String> v) -> Math.max(1, v.size()))
            .build();

    private final Counter versionsHalted;
    private final Counter rolledBack;
    private final Timer toLastWave;
    private volatile BiConsumer<String, Long> onRelease = (c, h) -> {};
    private final List<java.util.function.Consumer<RolloutStore.Entry>> stepListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Whether a tick has read every cluster's rollout since this api started: until then nothing may be released. */
    private volatile boolean loaded;
    /** Clusters with a policy whose rollout no tick could read since this api started (a node of one is answered 503). */
    private volatile Map<String, RuntimeException> unread = Map.of();
    /** Policies a fleet file declares, applied by the first tick that reaches the database; null once applied. */
    private volatile Map<String, String> declared;

    private volatile String declaredBy;

    public Rollouts(
            RolloutStore store,
            VersionHistory versions,
            NodeLabelStore nodeLabels,
            NodeStatusStore acks,
            OperatorActionStore actions,
            String eventsTopic,
            Clock clock,
            MeterRegistry meters) {
        this.store = store;
        this.versions = versions;
        this.nodeLabels = nodeLabels;
        this.acks = acks;
        this.actions = actions;
        this.eventsTopic = eventsTopic;
        this.clock = clock;
        this.versionsHalted = Counter.builder("rulesync.rollout.halted")
                .description("versions halted by their rollout")
                .register(meters);
        this.rolledBack = Counter.builder("rulesync.rollout.rollbacks")
                .description("automatic rollbacks requested by a rollout")
                .register(meters);
        this.toLastWave = Timer.builder("rulesync.rollout.duration")
                .description("from a version's rollout start to its last wave's completion")
                .register(meters);
    }

    /** Called with (cluster, head) after a step that may release versions to waiting agents. */
    public void onRelease(BiConsumer<String, Long> listener) {
        this.onRelease = listener;
    }

    /**
     * The newest version {@code node} may run, with {@code head} the cluster's newest: {@code head} without a policy; under
     * one, the version rolling out if the node's wave is open, else the last version that completed every wave. A node the
     * latter does not know (it joined since) gets the version rolling out: it would otherwise run nothing.
     */
    @Override
    public long released(String cluster, String node, long head) {
        if (!loaded) {
            // The first request after a start (agents reconnect at once) must not get a version its wave is not
            // released:
            // read the rollouts now rather than at the first tick. A database that is down fails the request, as any
            // read.
            tick();
        }
        RuntimeException notRead = unread.get(cluster);
        if (notRead != null) {
            throw new StoreException("reading the rollout of " + cluster, notRead);
        }
        View v = views.get(cluster);
        if (v == null || v.rollout() == null) {
            return head;
        }
        Rollout r = v.rollout();
        if (node == null) {
            // A reader that names no node gets what every wave has.
            return Math.min(head, r.state() == Rollout.State.COMPLETE ? r.version() : r.stable());
        }
        // COMPLETE: a newer head waits for the next tick to start it at the first wave.
        long rel = Math.min(
                head,
                r.state() == Rollout.State.COMPLETE
                        ? r.version()
                        : r.releasedTo(Waves.waveOf(
                                v.policy(),
                                cluster,
                                node,
                                zones(cluster, r.version()).getOrDefault(node, ""),
                                v.labels().getOrDefault(node, Map.of()))));
        if (!zones(cluster, rel).containsKey(node)) {
            // The version released to its wave does not know the node (it joined since): the oldest that does, since a
            // node
            // must not run nothing.
            rel = rel < r.version() && zones(cluster, r.version()).containsKey(node) ? r.version() : head;
        }
        return rel;
    }

    /** Whether the cluster has a policy (as this replica last read). */
    public boolean gated(String cluster) {
        return views.containsKey(cluster);
    }

    @Override
    public Long withheldBetween(String cluster, long after, long upTo) {
        View v = views.get(cluster);
        Long h = v == null ? null : v.halted().higher(after);
        return h != null && h < upTo ? h : null;
    }

    /** Told every step stored, as logged (the demo prints them). */
    public void onStep(java.util.function.Consumer<RolloutStore.Entry> listener) {
        stepListeners.add(listener);
    }

    /**
     * The policies a fleet file declares (JSON by cluster), set by {@code source} (the file's name): stored by the next tick
     * where they differ from what is stored, and a policy that file set before but no longer declares is removed. Policies
     * operators set through the api for clusters the file does not name are left alone.
     */
    public void declare(Map<String, String> policies, String source) {
        this.declaredBy = source;
        this.declared = Map.copyOf(policies);
    }

    /** Reads every cluster's policy and rollout and takes each one's next step; what {@link #released} answers follows. */
    public synchronized void tick() {
        Map<String, String> fromFile = declared;
        if (fromFile != null) {
            Instant now = clock.instant();
            Map<String, RolloutStore.StoredPolicy> stored = store.policies();
            fromFile.forEach((cluster, json) -> {
                RolloutStore.StoredPolicy p = stored.get(cluster);
                if (p == null || !p.json().equals(json)) {
                    store.setPolicy(
                            cluster, json, declaredBy, "declared in " + declaredBy, versions.head(cluster), now);
                }
            });
            stored.values().stream()
                    .filter(p -> p.setBy().equals(declaredBy) && !fromFile.containsKey(p.cluster()))
                    .forEach(p -> store.setPolicy(
                            p.cluster(),
                            null,
                            declaredBy,
                            "no longer declared in " + declaredBy,
                            versions.head(p.cluster()),
                            now));
            declared = null;
        }
        Map<String, RolloutStore.StoredPolicy> policies = store.policies();
        for (String gone : views.keySet()) {
            if (!policies.containsKey(gone)) {
                views.remove(gone);
                onRelease.accept(gone, versions.head(gone)); // every node may have the head again
            }
        }
        Map<String, RuntimeException> failed = new HashMap<>();
        for (RolloutStore.StoredPolicy p : policies.values()) {
            try {
                step(p.cluster(), RolloutPolicy.fromJson(p.json()));
            } catch (RuntimeException e) {
                // One cluster's trouble (its database rows, a policy stored by a newer api) must not stop the others'.
                // A cluster
                // read before keeps its last view; one never read holds its nodes (503) rather than release them
                // everything.
                log.warn("rollout of cluster {}: {}", p.cluster(), e.toString());
                if (!views.containsKey(p.cluster())) {
                    failed.put(p.cluster(), e);
                }
            }
        }
        unread = Map.copyOf(failed);
        loaded = true;
    }

    private void step(String cluster, RolloutPolicy policy) {
        long head = versions.head(cluster);
        if (head == 0) {
            return;
        }
        Instant now = clock.instant();
        Rollout r = store.rollout(cluster).map(Rollouts::of).orElse(null);
        if (r == null) {
            Rollout settled = Rollout.settled(cluster, head, now);
            RolloutStore.Entry e = entry(
                    settled,
                    "settled",
                    null,
                    SELF,
                    "a rollout policy is in force; version " + head + " counts as rolled out",
                    now);
            if (store.save(row(settled), -1, List.of(e))) {
                told(e);
                r = settled;
            } else {
                r = store.rollout(cluster).map(Rollouts::of).orElseThrow();
            }
        }
        r = r.within(policy.waves().size());
        Map<String, Map<String, String>> labels = labels(cluster, policy);
        Waves waves = Waves.assign(policy, cluster, zones(cluster, r.version()), labels);
        Map<String, NodeReport> reports = r.inProgress() ? reports(cluster) : Map.of();
        NavigableSet<Long> halted = new TreeSet<>(store.haltedVersions(cluster));
        // Only a rollout in progress with newer versions waiting can be superseded by a rollback: asked only then.
        long rollback =
                r.inProgress() && head > r.version() ? actions.newestRollbackVersion(cluster, r.version(), head) : 0;
        Step s = RolloutStep.next(r, policy, waves, reports, halted::contains, head, rollback, now);
        Rollout next = s instanceof Step.Start st
                ? st.rollout()
                : s instanceof Step.Advance a ? a.rollout() : s instanceof Step.Fail f ? f.rollout() : null;
        List<RolloutStore.Entry> logged = next == null ? List.of() : entries(s, r, next, policy, now);
        if (next != null && store.save(row(next), r.revision(), logged)) {
            logged.forEach(this::told);
            if (s instanceof Step.Fail) {
                halted.add(next.version());
            } else if (s instanceof Step.Start && r.inProgress()) {
                halted.add(r.version()); // superseded: logged so, and no node applies it on its way to the rollback
            }
            afterStep(s, r, next, policy, now);
            r = next;
        } else if (next != null) {
            r = store.rollout(cluster).map(Rollouts::of).orElse(r); // another replica stepped first
        }
        View before = views.get(cluster);
        views.put(cluster, new View(policy, r, halted, labels));
        if (before == null || !r.equals(before.rollout())) {
            onRelease.accept(cluster, head);
        }
    }

    private void afterStep(Step s, Rollout before, Rollout next, RolloutPolicy policy, Instant now) {
        if (s instanceof Step.Advance && next.state() == Rollout.State.COMPLETE) {
            toLastWave.record(Duration.between(next.startedAt(), now));
        }
        if (s instanceof Step.Fail f) {
            versionsHalted.increment();
            log.warn(
                    "rollout of cluster {} halted version {} at wave '{}': {}",
                    next.cluster(),
                    next.version(),
                    policy.waves().get(next.wave()).name(),
                    f.why());
            if (policy.onFailure() == RolloutPolicy.OnFailure.ROLLBACK) {
                try {
                    actions.request(
                            next.cluster(),
                            next.stable(),
                            SELF,
                            "version " + next.version() + " halted: " + f.why(),
                            now,
                            eventsTopic);
                    rolledBack.increment();
                    logOnly(
                            next,
                            "rollback-requested",
                            policy,
                            "to version " + next.stable() + ", the last that completed every wave",
                            now);
                } catch (ActionConflictException e) {
                    logOnly(
                            next,
                            "rollback-refused",
                            policy,
                            "another action of the cluster is pending: " + e.getMessage(),
                            now);
                }
            }
        }
    }

    private void logOnly(Rollout r, String event, RolloutPolicy policy, String detail, Instant now) {
        RolloutStore.Entry e = entry(
                r,
                event,
                policy.waves()
                        .get(Math.min(r.wave(), policy.waves().size() - 1))
                        .name(),
                SELF,
                detail,
                now);
        if (store.save(row(r), r.revision(), List.of(e))) {
            told(e);
        }
    }

    private void told(RolloutStore.Entry e) {
        for (var l : stepListeners) {
            try {
                l.accept(e);
            } catch (RuntimeException ex) {
                log.warn("a rollout step listener failed: {}", ex.toString());
            }
        }
    }

    private static List<RolloutStore.Entry> entries(
            Step s, Rollout before, Rollout next, RolloutPolicy p, Instant now) {
        List<RolloutStore.Entry> out = new ArrayList<>();
        if (s instanceof Step.Start st) {
            if (before.inProgress()) {
                out.add(entry(
                        before,
                        "superseded",
                        p.waves()
                                .get(Math.min(before.wave(), p.waves().size() - 1))
                                .name(),
                        SELF,
                        "by version " + next.version() + ": " + st.why() + "; a node that does not have version "
                                + before.version() + " never applies it",
                        now));
            }
            out.add(entry(next, "started", null, SELF, st.why() + "; the rest keep version " + next.stable(), now));
            out.add(entry(next, "wave-opened", p.waves().get(0).name(), SELF, "the first wave", now));
        } else if (s instanceof Step.Advance a) {
            out.add(entry(next, "baked", p.waves().get(before.wave()).name(), SELF, a.why(), now));
            out.add(
                    next.state() == Rollout.State.COMPLETE
                            ? entry(next, "completed", null, SELF, "every wave has version " + next.version(), now)
                            : entry(
                                    next,
                                    "wave-opened",
                                    p.waves().get(next.wave()).name(),
                                    SELF,
                                    "after wave '"
                                            + p.waves().get(before.wave()).name() + "'",
                                    now));
        } else if (s instanceof Step.Fail f) {
            out.add(entry(next, "halted", p.waves().get(next.wave()).name(), SELF, f.why(), now));
        }
        return out;
    }

    /**
     * An operator's step: {@code promote} (open the next wave now, or resume a paused rollout), {@code pause} or
     * {@code abort} (halt it where it is). Returns the stored rollout, or the reason it cannot be done.
     */
    public Rollout operator(String cluster, String action, String actor, String reason) throws RefusedException {
        RolloutStore.StoredPolicy sp = store.policy(cluster)
                .orElseThrow(() -> new RefusedException("cluster '" + cluster + "' has no rollout policy"));
        RolloutPolicy policy = RolloutPolicy.fromJson(sp.json());
        Rollout r = store.rollout(cluster)
                .map(Rollouts::of)
                .orElseThrow(() -> new RefusedException("cluster '" + cluster + "' has no rollout yet"))
                .within(policy.waves().size());
        if (!r.inProgress()) {
            throw new RefusedException(
                    "version " + r.version() + " is " + r.state().name().toLowerCase(Locale.ROOT)
                            + "; only a rolling or paused rollout can be " + action + "d");
        }
        Instant now = clock.instant();
        String wave = policy.waves().get(r.wave()).name();
        if (action.equals("pause") && r.state() == Rollout.State.PAUSED) {
            throw new RefusedException("version " + r.version() + " is paused already");
        }
        Rollout next = switch (action) {
            case "promote" ->
                RolloutStep.advance(r, policy, now, "promoted by " + actor + ": " + reason)
                        .rollout();
            case "pause" ->
                r.with(Rollout.State.PAUSED, r.wave(), r.waveOpenedAt(), "paused by " + actor + ": " + reason);
            case "abort" ->
                r.with(Rollout.State.HALTED, r.wave(), r.waveOpenedAt(), "aborted by " + actor + ": " + reason);
            default -> throw new IllegalArgumentException(action);
        };
        List<RolloutStore.Entry> steps = new ArrayList<>();
        steps.add(entry(
                next,
                action.equals("abort") ? "aborted" : action.equals("pause") ? "paused" : "promoted",
                wave,
                actor,
                reason,
                now));
        if (action.equals("promote")) {
            steps.add(
                    next.state() == Rollout.State.COMPLETE
                            ? entry(next, "completed", null, actor, "every wave has version " + next.version(), now)
                            : entry(
                                    next,
                                    "wave-opened",
                                    policy.waves().get(next.wave()).name(),
                                    actor,
                                    "promoted",
                                    now));
        }
        if (!store.save(row(next), r.revision(), steps)) {
            throw new RefusedException("the rollout moved meanwhile; read it again and retry");
        }
        steps.forEach(this::told);
        tick();
        return next;
    }

    /** An operator's step that cannot be taken, and why. */
    public static final class RefusedException extends Exception {
        public RefusedException(String message) {
            super(message);
        }
    }

    private Map<String, NodeReport> reports(String cluster) {
        Map<String, NodeReport> out = new HashMap<>();
        for (NodeStatus s : acks.nodeStatus(cluster)) {
            // The newest version it failed, even if a later one applied since: RolloutStep judges which failures count.
            out.put(s.node(), new NodeReport(s.running(), s.lastErrorVersion(), s.lastError()));
        }
        return out;
    }

    /** The labels of the cluster's nodes, by name: read only for a policy that selects by label. */
    Map<String, Map<String, String>> labels(String cluster, RolloutPolicy policy) {
        return policy.selectsByLabel() ? nodeLabels.labels(cluster) : Map.of();
    }

    /** A version's nodes and zones; versions never change, so a few are kept. */
    Map<String, String> zones(String cluster, long version) {
        return nodeZones.get(cluster + "\n" + version, k -> Map.copyOf(versions.nodes(cluster, version)));
    }

    static Rollout of(RolloutStore.Row w) {
        return new Rollout(
                w.cluster(),
                w.version(),
                w.stable(),
                w.wave(),
                w.waveOpenedAt(),
                w.startedAt(),
                Rollout.State.valueOf(w.state().toUpperCase(Locale.ROOT)),
                w.cause(),
                w.revision());
    }

    static RolloutStore.Row row(Rollout r) {
        return new RolloutStore.Row(
                r.cluster(),
                r.version(),
                r.stable(),
                r.wave(),
                r.waveOpenedAt(),
                r.startedAt(),
                r.state().name().toLowerCase(Locale.ROOT),
                r.cause(),
                r.revision());
    }

    private static RolloutStore.Entry entry(
            Rollout r, String event, String wave, String actor, String detail, Instant now) {
        return new RolloutStore.Entry(0, r.cluster(), r.version(), now, event, wave, actor, detail);
    }
}
