package io.rulesync.compiler.sim;

import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.OperatorAction;
import io.rulesync.model.event.ClusterEvent.ResumeRequested;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.Batch;
import io.rulesync.store.RecordedAction;
import io.rulesync.store.StoreException;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A seeded simulation of the compiler's processing of one events partition, in the style of FoundationDB's and
 * TigerBeetle's: the real {@link PartitionProcessor} against {@link MemoryPartitionStore}, fed from an in-memory log by a
 * scheduler that a seed drives entirely. Between and inside batches it injects what operators meet: crashes before and
 * after a commit, commits that fail or whose outcome is lost, records delivered again, a rebalance that leaves a zombie
 * writer behind (which then tries to commit), the clock jumping either way, late checkpoints, operator rollbacks and
 * resumes arriving among the changes, actions delivered twice, and records that are not events.
 *
 * <p>When the log is drained, it checks what must hold whatever happened: each cluster's versions are 1..N without a gap;
 * every record was stored exactly once, as an event or as a dead letter; the deltas, applied in order, give every stored
 * version; the newest rules are a fresh compile of the final objects (or, pinned, the pinned version's rules on today's
 * nodes); a pinned cluster published nothing but rollbacks, resumes and node changes; every action was carried out or
 * refused once; and a writer that was fenced changed nothing.
 *
 * <p>{@code faults/simulate} runs a sweep; a failing seed says how to replay it alone.
 */
public final class CompilerSimulation {
    private static final String GROUP = "compiler";
    private static final int PARTITION = 0;
    private static final List<String> CLUSTERS = List.of("a", "b");
    private static final List<String> NODES = List.of("n1", "n2", "n3");
    private static final List<String> SERVICES = List.of("web", "api", "db");
    private static final List<String> ENDPOINTS = List.of("10.244.0.1", "10.244.0.2", "10.244.0.3", "10.244.0.4");
    /** Encoded events by (cluster, manifest): encoding parses YAML, which a sweep of thousands of seeds would repeat. */
    private static final Map<String, String> ENCODED = new ConcurrentHashMap<>();

    /** A simulated crash of the compiler's process. */
    private static final class Crash extends RuntimeException {
        Crash(String where) {
            super("simulated crash " + where, null, false, false);
        }
    }

    /** One compiler instance holding the partition (or believing it does): its processor and where its consumer reads. */
    private final class Instance {
        final int id;
        final PartitionProcessor processor;
        long fetch;
        /** Checkpoints this instance's writer thread has yet to write. */
        final List<Runnable> checkpoints = new ArrayList<>();
        /** Where the next commit of this instance crashes, if it does. */
        PartitionProcessor.Point crashAt;

        Instance(int id, long claim) {
            this.id = id;
            this.processor = new PartitionProcessor(
                    store.as(PARTITION, claim),
                    Topics.DEFAULT,
                    GROUP,
                    PARTITION,
                    clock,
                    point -> {
                        if (point == crashAt) {
                            crashAt = null;
                            throw new Crash("at " + point);
                        }
                    },
                    PartitionProcessor.VersionListener.NONE,
                    PartitionProcessor.Observer.NONE,
                    Duration.ofMinutes(1),
                    checkpointEvery,
                    checkpoints::add);
            this.fetch = Math.max(0, processor.position());
        }
    }

    private final long seed;
    private final Random random;
    private final MemoryPartitionStore store;
    /** Moved by the scheduler, either way. */
    private final MutableClock clock = new MutableClock(Fixtures.T);

    private final int checkpointEvery;
    private final List<PartitionProcessor.Record> log = new ArrayList<>();
    private final List<String> trace = new ArrayList<>();
    private Instance owner;
    private Instance zombie;
    private int instances;
    private long nextAction = 1;

    public CompilerSimulation(long seed) {
        this(seed, MemoryPartitionStore.Defect.NONE);
    }

    /** A simulation whose store has {@code defect}: for showing that the checks find it. */
    public CompilerSimulation(long seed, MemoryPartitionStore.Defect defect) {
        this.seed = seed;
        this.store = new MemoryPartitionStore(defect);
        this.random = new Random(seed);
        this.checkpointEvery = 1 + random.nextInt(30);
    }

    /** What a run did, for the sweep's summary. */
    public record Result(
            long seed,
            int records,
            int versions,
            int crashes,
            int unknownCommits,
            int fencedAttempts,
            int rebalances) {}

    private int crashes;
    private int unknownCommits;
    private int fencedAttempts;
    private int rebalances;

    /**
     * Runs the simulation of this seed: {@code steps} scheduler steps, then the log drained without faults, then the
     * checks.
     *
     * @throws AssertionError naming the seed, the broken invariant and the last steps, when one does not hold
     */
    public Result run(int steps) {
        try {
            for (String c : CLUSTERS) {
                append(c, EventCodec.encode(new SettingsChanged(c, ClusterSettings.DEFAULT, clock.instant())));
            }
            owner = start();
            for (int i = 0; i < steps; i++) {
                step();
            }
            drain();
            check();
        } catch (AssertionError | RuntimeException e) {
            List<String> last = trace.subList(Math.max(0, trace.size() - 40), trace.size());
            throw new AssertionError(
                    "seed " + seed + ": " + e + "\n  replay: faults/simulate seed " + seed + "\n  last steps:\n    "
                            + String.join("\n    ", last),
                    e);
        }
        int versions = CLUSTERS.stream().mapToInt(c -> store.versions(c).size()).sum();
        return new Result(seed, log.size(), versions, crashes, unknownCommits, fencedAttempts, rebalances);
    }

    /** The records a seed's producer makes ({@code n} after each cluster's settings), with no fault and no compiler. */
    static List<PartitionProcessor.Record> records(long seed, int n) {
        CompilerSimulation sim = new CompilerSimulation(seed);
        for (String c : CLUSTERS) {
            sim.append(c, EventCodec.encode(new SettingsChanged(c, ClusterSettings.DEFAULT, sim.clock.instant())));
        }
        sim.produce(n);
        return List.copyOf(sim.log);
    }

    private Instance start() {
        int id = ++instances;
        long claim = store.claim(PARTITION);
        trace.add("instance " + id + " starts with claim " + claim);
        Instance i = new Instance(id, claim);
        i.processor.storeRecompiledVersions();
        return i;
    }

    private void step() {
        int r = random.nextInt(100);
        if (r < 30) {
            produce(1 + random.nextInt(5));
        } else if (r < 60) {
            poll(owner, true);
        } else if (r < 64) {
            operatorAction();
        } else if (r < 67) {
            // The outbox relay delivers at least once: an action's record arrives again.
            List<PartitionProcessor.Record> actions =
                    log.stream().filter(x -> x.value().contains("\"actionId\"")).toList();
            if (!actions.isEmpty()) {
                PartitionProcessor.Record again = actions.get(random.nextInt(actions.size()));
                trace.add("action record at offset " + again.offset() + " delivered again");
                append(again.key(), again.value());
            }
        } else if (r < 72) {
            // Kafka delivers from an older offset (a seek back, an uncommitted offset after a rebalance).
            long back = Math.max(0, owner.fetch - 1 - random.nextInt(10));
            trace.add("instance " + owner.id + " reads again from offset " + back);
            owner.fetch = back;
        } else if (r < 77) {
            crashNextCommit();
        } else if (r < 81) {
            troubleNextCommit();
        } else if (r < 85) {
            rebalance();
        } else if (r < 89) {
            if (zombie != null) {
                zombieTries();
            }
        } else if (r < 93) {
            Duration jump = Duration.ofSeconds(random.nextInt(7200) - 3600L);
            clock.advance(jump);
            trace.add("clock jumps " + jump);
        } else if (r < 97) {
            runCheckpoints(owner);
        } else {
            trace.add("instance " + owner.id + " restarts cleanly");
            owner = start();
        }
    }

    private void produce(int n) {
        for (int i = 0; i < n; i++) {
            String cluster = CLUSTERS.get(random.nextInt(CLUSTERS.size()));
            int what = random.nextInt(100);
            String value;
            if (what < 15) {
                String node = pick(NODES);
                value = up(cluster, Fixtures.node(node, "10.1.0." + (1 + NODES.indexOf(node))));
            } else if (what < 20) {
                value = deleted(cluster, ObjectKind.NODE, pick(NODES));
            } else if (what < 35) {
                String s = pick(SERVICES);
                value = up(cluster, Fixtures.service(s, "10.96.0." + (1 + SERVICES.indexOf(s))));
            } else if (what < 40) {
                value = deleted(cluster, ObjectKind.SERVICE, "shop/" + pick(SERVICES));
            } else if (what < 80) {
                List<String> eps = new ArrayList<>();
                for (String ep : ENDPOINTS) {
                    if (random.nextBoolean()) {
                        eps.add(ep);
                    }
                }
                value = up(cluster, Fixtures.slice(pick(SERVICES), pick(NODES), eps.toArray(String[]::new)));
            } else if (what < 86) {
                value = deleted(cluster, ObjectKind.ENDPOINT_SLICE, "shop/" + pick(SERVICES) + "-1");
            } else if (what < 92) {
                // A relist's marker: what it does not name is gone.
                Set<String> keep = new TreeSet<>();
                for (String s : SERVICES) {
                    if (random.nextInt(4) > 0) {
                        keep.add("shop/" + s);
                    }
                }
                value = EventCodec.encode(new SyncMarker(cluster, ObjectKind.SERVICE, keep, clock.instant()));
            } else if (what < 96) {
                value = "{not json " + random.nextInt(1000);
            } else {
                // A record of one cluster under another's key.
                value = up(CLUSTERS.get(1 - CLUSTERS.indexOf(cluster)), Fixtures.node("n9", "10.1.0.9"));
            }
            append(cluster, value);
        }
        trace.add("produced " + n + "; the log ends at " + log.size());
    }

    /** An operator's rollback (to a version stored now) or resume, recorded as the api does, then published. */
    private void operatorAction() {
        String cluster = pick(CLUSTERS);
        long head = store.versions(cluster).size();
        long id = nextAction++;
        Long to = head > 0 && random.nextInt(3) > 0 ? 1 + (long) random.nextInt((int) head) : null;
        if (!store.recordAction(id, cluster, to == null ? "resume" : "rollback", to)) {
            trace.add("operator: refused, an action of cluster " + cluster + " is pending");
            return;
        }
        OperatorAction a = to == null
                ? new ResumeRequested(cluster, id, "sim", "seeded", clock.instant())
                : new RollbackRequested(cluster, id, to, "sim", "seeded", clock.instant());
        trace.add("operator: " + a);
        append(cluster, EventCodec.encode(a));
    }

    private void crashNextCommit() {
        owner.crashAt =
                random.nextBoolean() ? PartitionProcessor.Point.BEFORE_COMMIT : PartitionProcessor.Point.AFTER_COMMIT;
        trace.add("instance " + owner.id + " will crash " + owner.crashAt);
    }

    private void troubleNextCommit() {
        MemoryPartitionStore.Trouble t = random.nextBoolean()
                ? MemoryPartitionStore.Trouble.FAIL_BEFORE
                : MemoryPartitionStore.Trouble.FAIL_AFTER;
        trace.add("the next commit: " + t);
        store.troubleNextCommit(t);
    }

    /** Another member is given the partition; the old one, not told yet, is left a zombie that may still try to commit. */
    private void rebalance() {
        rebalances++;
        zombie = owner;
        trace.add("rebalance: instance " + zombie.id + " is now a zombie");
        owner = start();
    }

    /** The zombie's next batch: it must be fenced, and write nothing. */
    private void zombieTries() {
        Instance z = zombie;
        long before = store.changes();
        List<PartitionProcessor.Record> batch = batchFrom(z.fetch);
        runCheckpoints(z); // a frozen process's checkpoint thread wakes with it
        long afterCheckpoints = store.changes();
        if (batch.isEmpty()) {
            return;
        }
        trace.add("zombie " + z.id + " tries offsets " + batch.get(0).offset() + ".."
                + batch.get(batch.size() - 1).offset());
        try {
            PartitionProcessor.Outcome o = z.processor.process(batch);
            if (store.changes() != afterCheckpoints) {
                throw new AssertionError("zombie " + z.id + " wrote (" + o + ") after it was fenced");
            }
            if (o == PartitionProcessor.Outcome.DONE) {
                z.fetch = batch.get(batch.size() - 1).offset() + 1; // nothing of it was new to the zombie
            }
        } catch (Crash c) {
            crashes++;
            trace.add("zombie " + z.id + ": " + c.getMessage());
            zombie = null;
            if (store.changes() != afterCheckpoints) {
                throw new AssertionError("zombie " + z.id + " crashed and the store changed");
            }
        } catch (StoreException e) {
            trace.add("zombie " + z.id + ": " + e.getMessage());
            if (store.changes() != afterCheckpoints) {
                throw new AssertionError("zombie " + z.id + " failed to commit but the store changed");
            }
        } catch (PartitionProcessor.Fenced f) {
            fencedAttempts++;
            trace.add("zombie " + z.id + " fenced: " + f.getMessage());
            if (store.changes() != afterCheckpoints) {
                throw new AssertionError("zombie " + z.id + " was fenced but the store changed");
            }
            zombie = null; // it stands down
        }
        if (afterCheckpoints != before) {
            trace.add("zombie " + z.id + " wrote a late checkpoint");
        }
    }

    private void runCheckpoints(Instance i) {
        List<Runnable> due = new ArrayList<>(i.checkpoints);
        i.checkpoints.clear();
        due.forEach(Runnable::run);
    }

    private List<PartitionProcessor.Record> batchFrom(long fetch) {
        int from = (int) Math.min(fetch, log.size());
        int to = Math.min(log.size(), from + 1 + random.nextInt(12));
        return List.copyOf(log.subList(from, to));
    }

    /**
     * The owner's consumer returns a batch from where it reads and the processor takes it, as the Kafka listener does: a
     * failed batch is retried whole, a stale one seeks to the stored position, a crash starts a new instance.
     */
    private void poll(Instance i, boolean faults) {
        List<PartitionProcessor.Record> batch = batchFrom(i.fetch);
        if (batch.isEmpty()) {
            return;
        }
        for (int attempt = 0; ; attempt++) {
            if (attempt > 5) {
                throw new AssertionError(
                        "the batch from offset " + batch.get(0).offset() + " failed 5 times without a fault injected");
            }
            try {
                PartitionProcessor.Outcome o = i.processor.process(batch);
                if (o == PartitionProcessor.Outcome.STALE) {
                    trace.add("instance " + i.id + ": stale at offset "
                            + batch.get(0).offset() + "; rebuilt, reads from " + i.processor.position());
                    i.fetch = Math.max(0, i.processor.position());
                } else {
                    trace.add("instance " + i.id + " processed offsets "
                            + batch.get(0).offset() + ".."
                            + batch.get(batch.size() - 1).offset());
                    i.fetch = batch.get(batch.size() - 1).offset() + 1;
                }
                if (!faults || random.nextInt(3) == 0) {
                    runCheckpoints(i);
                }
                return;
            } catch (Crash c) {
                crashes++;
                trace.add("instance " + i.id + ": " + c.getMessage() + "; a new instance starts");
                owner = start();
                return;
            } catch (StoreException e) {
                // The error handler retries the batch whole, on the same instance.
                unknownCommits++;
                trace.add("instance " + i.id + ": " + e.getMessage() + "; retried");
            } catch (PartitionProcessor.Fenced f) {
                throw new AssertionError("the owner was fenced: " + f.getMessage());
            }
        }
    }

    /** No more faults: the owner reads the log to its end, the zombie stands down, late checkpoints are written. */
    private void drain() {
        owner.crashAt = null;
        store.troubleNextCommit(MemoryPartitionStore.Trouble.NONE);
        if (zombie != null) {
            zombieTries();
        }
        trace.add("drain");
        for (int guard = 0; owner.fetch < log.size(); guard++) {
            if (guard > 10 * log.size() + 100) {
                throw new AssertionError(
                        "the owner does not reach the end of the log (at " + owner.fetch + " of " + log.size() + ")");
            }
            poll(owner, false);
        }
        runCheckpoints(owner);
        // And a restart reads it all back as it was: the next instance's heads are the stored ones.
        Instance again = start();
        for (String c : CLUSTERS) {
            ClusterHead rebuilt = again.processor.heads().get(c);
            ClusterHead held = owner.processor.heads().get(c);
            if (held != null
                    && (rebuilt == null
                            || !rebuilt.published().equals(held.published())
                            || rebuilt.version() != held.version())) {
                throw new AssertionError("cluster " + c + ": a rebuild does not give the head the last instance held");
            }
        }
        owner = again;
    }

    private void check() {
        // Every record stored exactly once: as an event or as a dead letter.
        List<Long> stored = new ArrayList<>();
        store.events().forEach(e -> stored.add(e.offset()));
        store.deadLetters().forEach(d -> stored.add(d.offset()));
        Set<Long> unique = new HashSet<>(stored);
        if (unique.size() != stored.size()) {
            throw new AssertionError("a record was stored twice: " + duplicates(stored));
        }
        for (PartitionProcessor.Record r : log) {
            if (!unique.contains(r.offset())) {
                throw new AssertionError("the record at offset " + r.offset() + " was never stored");
            }
        }
        for (String c : CLUSTERS) {
            checkCluster(c);
        }
        for (Map.Entry<Long, MemoryPartitionStore.Action> a : store.actions().entrySet()) {
            if (store.actionStatusOf(a.getKey()).equals("pending")) {
                throw new AssertionError(
                        "operator action " + a.getKey() + " is still pending after its record was read");
            }
        }
    }

    private void checkCluster(String cluster) {
        List<MemoryPartitionStore.Version> versions = store.versions(cluster);
        for (int i = 0; i < versions.size(); i++) {
            if (versions.get(i).seq() != i + 1) {
                throw new AssertionError("cluster " + cluster + ": versions are not 1..N: "
                        + versions.stream().map(v -> v.seq()).toList());
            }
        }
        // The deltas, in the order published, give every version.
        ClusterRules rules = ClusterRules.EMPTY;
        long at = 0;
        for (Batch.OutboxRow row : store.outbox()) {
            if (row.topic().equals(Topics.DEFAULT.deltas()) && row.key().equals(cluster)) {
                RulesDelta d = RulesDelta.fromJson(row.payload());
                if (d.base() != at) {
                    throw new AssertionError("cluster " + cluster + ": the delta to " + d.target() + " follows " + at
                            + ", not " + d.base());
                }
                rules = d.diff().applyTo(rules);
                at = d.target();
                if (!rules.equals(versions.get((int) at - 1).rules())) {
                    throw new AssertionError(
                            "cluster " + cluster + ": the deltas up to " + at + " do not give version " + at);
                }
            }
        }
        if (at != versions.size()) {
            throw new AssertionError(
                    "cluster " + cluster + ": deltas published up to " + at + " of " + versions.size() + " versions");
        }
        // Pinned, only actions and nodes make versions.
        for (MemoryPartitionStore.Version v : versions) {
            if (v.pinnedBefore() && !v.acted() && !v.row().diff().fragments().isEmpty()) {
                throw new AssertionError("cluster " + cluster + ": version " + v.seq() + " changed "
                        + v.row().diff().fragments().size()
                        + " fragment(s) while the cluster was pinned; its cause: " + v.cause()
                        + "; the cluster's actions: "
                        + actionsOf(cluster));
            }
        }
        if (versions.isEmpty()) {
            return;
        }
        // The newest rules: a fresh compile of the final objects (on a pin: the pinned version's rules, on today's
        // nodes).
        List<ClusterEvent> facts = new ArrayList<>();
        Set<Long> deadOffsets = new HashSet<>();
        store.deadLetters().forEach(d -> deadOffsets.add(d.offset()));
        for (PartitionProcessor.Record r : log) {
            if (r.key().equals(cluster)
                    && !deadOffsets.contains(r.offset())
                    && EventCodec.decode(r.value()) instanceof EventCodec.Decoded.Valid v
                    && !(v.event() instanceof OperatorAction)) {
                facts.add(v.event());
            }
        }
        ClusterRules fresh = ClusterHead.empty(cluster).apply(facts).next().published();
        MemoryPartitionStore.Version newest = versions.get(versions.size() - 1);
        Long pinnedTo = store.pinning(cluster).map(RecordedAction::toVersion).orElse(null);
        ClusterRules expected = pinnedTo == null
                ? fresh
                : versions.get((int) (long) pinnedTo - 1).rules().withNodes(fresh.nodes());
        if (!newest.rules().equals(expected)) {
            throw new AssertionError("cluster " + cluster + ": the newest version (" + newest.seq() + ") is not "
                    + (pinnedTo == null
                            ? "a fresh compile of the final objects"
                            : "version " + pinnedTo + "'s rules on today's nodes"));
        }
    }

    private String actionsOf(String cluster) {
        StringBuilder out = new StringBuilder();
        store.actions().values().stream()
                .filter(a -> a.cluster.equals(cluster))
                .sorted((x, y) -> Long.compare(x.id, y.id))
                .forEach(a -> out.append(a.id)
                        .append(' ')
                        .append(a.kind)
                        .append(a.toVersion == null ? "" : " to " + a.toVersion)
                        .append(": ")
                        .append(a.status)
                        .append(a.resultVersion == null ? "" : " as " + a.resultVersion)
                        .append("; "));
        return out.toString();
    }

    private static List<Long> duplicates(List<Long> offsets) {
        Set<Long> seen = new HashSet<>();
        Set<Long> twice = new LinkedHashSet<>();
        offsets.forEach(o -> {
            if (!seen.add(o)) {
                twice.add(o);
            }
        });
        return List.copyOf(twice);
    }

    private void append(String key, String value) {
        log.add(new PartitionProcessor.Record(log.size(), key, value));
    }

    private <T> T pick(List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    private static String up(String cluster, String yaml) {
        return ENCODED.computeIfAbsent(cluster + "\0" + yaml, k -> EventCodec.encode(Fixtures.upsert(cluster, yaml)));
    }

    private String deleted(String cluster, ObjectKind kind, String key) {
        return EventCodec.encode(new ObjectDeleted(cluster, new ObjectRef(kind, key), "2", clock.instant()));
    }

    /**
     * {@code faults/simulate [SEEDS [FIRST [STEPS]]]}: a sweep of SEEDS seeds from FIRST (default 10,000 from 1, 150 steps
     * each); {@code faults/simulate seed N [STEPS]}: one seed, as a failing one said.
     */
    public static void main(String[] args) {
        quiet();
        if (args.length > 0 && args[0].equals("seed")) {
            long s = Long.parseLong(args[1]);
            Result r = new CompilerSimulation(s).run(args.length > 2 ? Integer.parseInt(args[2]) : STEPS);
            System.out.println("seed " + s + ": every invariant held; " + r);
            return;
        }
        int seeds = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        long first = args.length > 1 ? Long.parseLong(args[1]) : 1;
        int steps = args.length > 2 ? Integer.parseInt(args[2]) : STEPS;
        Sweep s = sweep(first, seeds, steps);
        System.out.println(s);
        if (!s.failures().isEmpty()) {
            System.exit(1);
        }
    }

    /** Steps a seed runs by default. */
    public static final int STEPS = 150;

    /** What a sweep found. */
    public record Sweep(
            int seeds,
            long millis,
            long records,
            long versions,
            long crashes,
            long unknownCommits,
            long fenced,
            long rebalances,
            List<String> failures) {
        @Override
        public String toString() {
            return String.format(
                    "%,d seeds in %.1f s: %,d records, %,d versions; injected %,d crashes, %,d failed or lost commits, "
                            + "%,d rebalances (%,d zombie commits fenced); %s",
                    seeds,
                    millis / 1e3,
                    records,
                    versions,
                    crashes,
                    unknownCommits,
                    rebalances,
                    fenced,
                    failures.isEmpty()
                            ? "every invariant held"
                            : failures.size() + " failed:\n" + String.join("\n", failures));
        }
    }

    /** Runs {@code count} seeds from {@code first}, each {@code steps} steps. */
    public static Sweep sweep(long first, int count, int steps) {
        return sweep(first, count, steps, MemoryPartitionStore.Defect.NONE);
    }

    /** {@link #sweep(long, int, int)} on a store with {@code defect}. */
    public static Sweep sweep(long first, int count, int steps, MemoryPartitionStore.Defect defect) {
        long t0 = System.nanoTime();
        // Seeds share nothing: they run on every core, and are summed in seed order.
        List<Object> outcomes = java.util.stream.LongStream.range(first, first + count)
                .parallel()
                .mapToObj(s -> {
                    try {
                        return (Object) new CompilerSimulation(s, defect).run(steps);
                    } catch (AssertionError e) {
                        return e.getMessage();
                    }
                })
                .toList();
        long records = 0;
        long versions = 0;
        long crashes = 0;
        long unknown = 0;
        long fenced = 0;
        long rebalances = 0;
        List<String> failures = new ArrayList<>();
        for (Object o : outcomes) {
            if (o instanceof Result r) {
                records += r.records();
                versions += r.versions();
                crashes += r.crashes();
                unknown += r.unknownCommits();
                fenced += r.fencedAttempts();
                rebalances += r.rebalances();
            } else {
                failures.add((String) o);
            }
        }
        return new Sweep(
                count,
                (System.nanoTime() - t0) / 1_000_000,
                records,
                versions,
                crashes,
                unknown,
                fenced,
                rebalances,
                failures);
    }

    /** The processor logs each version and refusal: at thousands of seeds, only errors are worth a line. */
    static void quiet() {
        if (org.slf4j.LoggerFactory.getLogger("io.rulesync") instanceof ch.qos.logback.classic.Logger l) {
            l.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
    }
}
