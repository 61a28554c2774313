package io.rulesync.compiler.bench;

import io.rulesync.compiler.checkpoint.Checkpoint;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.EventLog;
import io.rulesync.testsupport.TestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What a compiler pays to take over a partition (results: BENCHMARKS.md): one cluster of SERVICES
 * Services (one EndpointSlice each, 10 endpoints, 100 nodes) whose log holds N stored events, made by
 * the real {@link PartitionProcessor} against PostgreSQL (the initial load, then endpoint moves of
 * random Services in batches of 5,000, one version per batch), then timed: a new processor's rebuild
 * from the newest checkpoint and the events after it (fewer than CHECKPOINT_EVERY), and, for
 * comparison, from the whole log with the checkpoint removed. Median of ROUNDS rebuilds each after
 * one untimed warm-up (a whole-log replay above 200,000 events: one, without warm-up; it takes minutes).
 *
 * <p>Usage: {@code bench/takeover [SERVICES CHECKPOINT_EVERY ROUNDS N...]}, default
 * {@code 10000 10000 3 20000 100000 1000000} (20,000 is the initial load itself: 10,000 Services and
 * their slices).
 */
public final class TakeoverBenchmark {
    private static final String CLUSTER = "bench";
    private static final int NODES = 100;
    private static final int ENDPOINTS = 10;
    private static final int BATCH = 5_000;

    private TakeoverBenchmark() {}

    public static void main(String[] args) {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int every = args.length > 1 ? Integer.parseInt(args[1]) : PartitionProcessor.DEFAULT_CHECKPOINT_EVERY;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        long[] sizes = args.length > 3
                ? Arrays.stream(args, 3, args.length).mapToLong(Long::parseLong).toArray()
                : new long[] {20_000, 100_000, 1_000_000};
        System.out.printf(
                "takeover of one cluster of %,d Services (%d endpoints, %d nodes), checkpoint every %,d events%n",
                services, ENDPOINTS, NODES, every);
        System.out.printf(
                "%10s %9s %9s %12s %12s %14s %14s%n",
                "events", "versions", "db", "fill s", "since cp", "checkpoint s", "whole log s");
        // The JIT first: without this the first size's rebuilds run colder code than the later ones.
        run(Math.max(1, services / 5), every, 1, 2L * every + 1_000, false);
        for (long n : sizes) {
            run(services, every, rounds, n, true);
        }
    }

    private static void run(int services, int every, int rounds, long events, boolean report) {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            JdbcTemplate sql = new JdbcTemplate(db.dataSource());
            Clock clock = Clock.systemUTC();
            long t0 = System.nanoTime();
            fill(store, clock, services, every, events);
            double fill = (System.nanoTime() - t0) / 1e9;
            long stored = sql.queryForObject("SELECT count(*) FROM cluster_event", Long.class);
            long versions = sql.queryForObject("SELECT count(*) FROM version", Long.class);
            long since = sql.queryForObject(
                    "SELECT count(*) FROM cluster_event WHERE id > coalesce("
                            + "(SELECT last_event_id FROM cluster_checkpoint WHERE cluster = ?), 0)",
                    Long.class,
                    CLUSTER);
            String size =
                    sql.queryForObject("SELECT pg_size_pretty(pg_database_size(current_database()))", String.class);

            System.gc(); // the fill's garbage is not the rebuild's
            double withCheckpoint = median(rounds, true, () -> processor(store, clock, every));
            if (report) {
                phases(store);
            }
            sql.update("DELETE FROM cluster_checkpoint");
            boolean wholeIsLong = stored > 200_000;
            System.gc();
            double wholeLog = median(wholeIsLong ? 1 : rounds, !wholeIsLong, () -> processor(store, clock, every));
            if (!report) {
                return;
            }
            System.out.printf(
                    "%,10d %,9d %9s %12.1f %,12d %14.2f %14.2f%n",
                    stored, versions, size, fill, since, withCheckpoint, wholeLog);
        }
    }

    /** The cluster's history, made by the real processor: the initial load, then endpoint moves until N events are stored. */
    private static void fill(CompilerStores store, Clock clock, int services, int every, long events) {
        PartitionProcessor p = processor(store, clock, every);
        List<String> initial = BenchFeed.initialLoad(CLUSTER, services, ENDPOINTS, NODES, Instant.now());
        long offset = 0;
        for (int from = 0; from < initial.size(); from += BATCH) {
            offset = deliver(p, offset, initial.subList(from, Math.min(initial.size(), from + BATCH)));
        }
        // Endpoint moves until N events are stored; how many the newest checkpoint leaves is printed ("since cp").
        Random r = new Random(events);
        int[] generation = new int[services];
        while (offset < events) {
            int size = (int) Math.min(BATCH, events - offset);
            List<String> batch = new ArrayList<>(size);
            for (int k = 0; k < size; k++) {
                int i = r.nextInt(services);
                batch.add(BenchFeed.upsert(
                        CLUSTER, PipelineBenchmark.slice(i, ENDPOINTS, NODES, ++generation[i]), Instant.now()));
            }
            offset = deliver(p, offset, batch);
        }
    }

    /** Where a rebuild's time goes: the steps of {@link PartitionProcessor#rebuild()}, each timed once (warm). */
    private static void phases(CompilerStores store) {
        long t = System.nanoTime();
        List<String> clusters = store.events().clustersOn(Topics.DEFAULT.events(), 0);
        long clustersOn = System.nanoTime() - t;
        t = System.nanoTime();
        EventLog.StoredCheckpoint cp = store.events().checkpoint(CLUSTER).orElseThrow();
        long fetch = System.nanoTime() - t;
        t = System.nanoTime();
        List<ClusterEvent> events =
                new ArrayList<>(((Checkpoint.Read.Usable) Checkpoint.read(CLUSTER, cp.text())).events());
        long read = System.nanoTime() - t;
        t = System.nanoTime();
        List<String> after = store.events().eventPayloadsAfter(CLUSTER, cp.lastEventId());
        long fetchAfter = System.nanoTime() - t;
        t = System.nanoTime();
        after.forEach(p -> events.add(((EventCodec.Decoded.Valid) EventCodec.decode(p)).event()));
        long decodeAfter = System.nanoTime() - t;
        t = System.nanoTime();
        long head = store.history().head(CLUSTER);
        ClusterRules published = store.history().rules(CLUSTER, head);
        long rules = System.nanoTime() - t;
        t = System.nanoTime();
        ClusterHead.rebuilt(CLUSTER, events, head, published, null, Lineage.UNKNOWN);
        long fold = System.nanoTime() - t;
        System.out.printf(
                "    phases (s): clusters %.2f, checkpoint fetch %.2f, read and check %.2f, events after: fetch %.2f, "
                        + "decode %.2f (%,d); head's rules %.2f; fold and compile %.2f%n",
                clustersOn / 1e9,
                fetch / 1e9,
                read / 1e9,
                fetchAfter / 1e9,
                decodeAfter / 1e9,
                after.size(),
                rules / 1e9,
                fold / 1e9);
        if (clusters.size() != 1) {
            throw new IllegalStateException("one cluster was stored, not " + clusters);
        }
    }

    private static PartitionProcessor processor(CompilerStores store, Clock clock, int every) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "bench",
                0,
                clock,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                PartitionProcessor.Observer.NONE,
                Duration.ofMinutes(1),
                every);
    }

    private static long deliver(PartitionProcessor p, long offset, List<String> values) {
        return BenchFeed.deliver(p, CLUSTER, offset, values);
    }

    /** Median seconds of {@code rounds} rebuilds, each a new processor (its constructor rebuilds). */
    private static double median(int rounds, boolean warmUp, Runnable rebuild) {
        if (warmUp) {
            rebuild.run();
        }
        double[] s = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long t = System.nanoTime();
            rebuild.run();
            s[i] = (System.nanoTime() - t) / 1e9;
        }
        Arrays.sort(s);
        return s[rounds / 2];
    }
}
