package io.rulesync.compiler.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.compiler.retention.RetentionPolicy;
import io.rulesync.compiler.runtime.CompilerMetrics;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.compiler.runtime.RetentionSweep;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.HistoryPruning;
import io.rulesync.testsupport.MutableClock;
import io.rulesync.testsupport.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How fast the database grows, with and without retention (results: BENCHMARKS.md, "Storage"). One cluster of
 * SERVICES Services (10 endpoints each, 100 nodes) takes a steady stream of changes (one endpoint of a random Service
 * moves) at each RATE per second for SECONDS of simulated time, through the real {@link PartitionProcessor} and
 * PostgreSQL. The stream is cut into the batches the compiler's 100 ms coalescing window makes of it (a rate of 100/s:
 * 10 events per batch, 10 versions a second), and the clock is the simulated one, so a day's history is written in
 * minutes. The outbox is emptied every simulated 10 s, as the relay does once Kafka has the deltas (no Kafka here).
 * Measured: the tables' size on disk (indexes and TOAST included) after the initial load and at the end,
 * per day at that rate. With retention, a pass of {@link RetentionSweep} (keep the newest RETAIN versions) and a
 * VACUUM (what autovacuum does in production) run every simulated minute, and the figure is the band the size holds
 * in over the second half of the run, when the kept window is full: with retention in step, a day adds nothing.
 *
 * <p>Usage: {@code bench/storage [SERVICES SECONDS RETAIN CHECKPOINT_EVERY RATE...]}, default
 * {@code 1000 600 300 2000 1 10 100}.
 */
public final class StorageBenchmark {
    private static final String CLUSTER = "bench";
    private static final int NODES = 100;
    private static final int ENDPOINTS = 10;
    private static final Duration WINDOW = Duration.ofMillis(100);
    private static final Instant START = Instant.parse("2026-12-01T00:00:00Z");

    private StorageBenchmark() {}

    public static void main(String[] args) {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 600;
        int retain = args.length > 2 ? Integer.parseInt(args[2]) : 300;
        int every = args.length > 3 ? Integer.parseInt(args[3]) : 2_000;
        double[] rates = args.length > 4
                ? Arrays.stream(args, 4, args.length)
                        .mapToDouble(Double::parseDouble)
                        .toArray()
                : new double[] {1, 10, 100};
        System.out.printf(
                "storage of one cluster of %,d Services (%d endpoints, %d nodes), %d s simulated per run, checkpoint "
                        + "every %,d events; retention keeps the newest %,d versions%n",
                services, ENDPOINTS, NODES, seconds, every, retain);
        System.out.printf(
                "%8s %10s %9s %9s %10s %11s %11s %12s %16s %10s%n",
                "rate/s",
                "retention",
                "events",
                "versions",
                "loaded MB",
                "end MB",
                "B/version",
                "B/event",
                "MB/day or held",
                "prune ms");
        for (double rate : rates) {
            run(services, seconds, rate, every, 0);
            run(services, seconds, rate, every, retain);
        }
    }

    private static void run(int services, int seconds, double rate, int every, int retain) {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            JdbcTemplate sql = new JdbcTemplate(db.dataSource());
            MutableClock clock = new MutableClock(START);
            PartitionProcessor p = new PartitionProcessor(
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
            RetentionSweep sweep = new RetentionSweep(
                    new HistoryPruning(db.dataSource()),
                    store.history(),
                    store.events(),
                    retain > 0
                            ? new RetentionPolicy(OptionalInt.of(retain), Optional.empty())
                            : RetentionPolicy.KEEP_ALL,
                    clock,
                    new CompilerMetrics(new SimpleMeterRegistry()),
                    RetentionSweep.DEFAULT_MAX_VERSIONS,
                    RetentionSweep.DEFAULT_MAX_EVENTS,
                    null);
            long offset =
                    BenchFeed.deliver(p, CLUSTER, 0, BenchFeed.initialLoad(CLUSTER, services, ENDPOINTS, NODES, START));
            vacuum(sql);
            long loaded = size(sql);
            long versions0 = sql.queryForObject("SELECT count(*) FROM version", Long.class);

            Random r = new Random(42);
            int[] generation = new int[services];
            double due = 0;
            long events = 0;
            long low = Long.MAX_VALUE;
            long high = 0;
            java.util.Map<String, Long> halfTables = java.util.Map.of();
            long pruneNanos = 0;
            int passes = 0;
            long windows = seconds * 1000L / WINDOW.toMillis();
            for (long w = 1; w <= windows; w++) {
                clock.set(START.plus(WINDOW.multipliedBy(w)));
                due += rate * WINDOW.toMillis() / 1000.0;
                List<String> batch = new ArrayList<>();
                for (; due >= 1; due--) {
                    int i = r.nextInt(services);
                    batch.add(BenchFeed.upsert(
                            CLUSTER, PipelineBenchmark.slice(i, ENDPOINTS, NODES, ++generation[i]), START));
                }
                if (!batch.isEmpty()) {
                    offset = BenchFeed.deliver(p, CLUSTER, offset, batch);
                    events += batch.size();
                }
                if (w % 100 == 0) {
                    // What the outbox relay does once Kafka took the deltas (no Kafka here): the outbox stays small.
                    sql.update("DELETE FROM outbox");
                }
                if (retain > 0 && w % 600 == 0) { // every simulated minute
                    long t = System.nanoTime();
                    sweep.sweep();
                    pruneNanos += System.nanoTime() - t;
                    passes++;
                    vacuum(sql);
                    if (w > windows / 2) { // the kept window is full: the size should hold within a band
                        long now = size(sql);
                        low = Math.min(low, now);
                        high = Math.max(high, now);
                    }
                }
                if (w == windows / 2) {
                    vacuum(sql);
                    halfTables = tables(sql);
                }
            }
            vacuum(sql);
            long end = size(sql);
            java.util.Map<String, Long> endTables = tables(sql);
            StringBuilder grew = new StringBuilder();
            for (var e : endTables.entrySet()) {
                long d = e.getValue() - halfTables.getOrDefault(e.getKey(), 0L);
                if (Math.abs(d) >= 100_000) {
                    grew.append(String.format(" %s %+.1f", e.getKey(), d / 1e6));
                }
            }
            long versions = sql.queryForObject("SELECT max(seq) FROM version", Long.class) - versions0;
            String growth = retain > 0
                    ? String.format("held %.1f-%.1f", low / 1e6, high / 1e6)
                    : String.format("%,.0f", (end - loaded) / (double) seconds * 86_400 / 1e6);
            System.out.printf(
                    "%8.0f %10s %,9d %,9d %10.1f %11.1f %11s %12s %16s %10s%n",
                    rate,
                    retain > 0 ? "newest " + retain : "none",
                    events,
                    versions,
                    loaded / 1e6,
                    end / 1e6,
                    retain > 0 ? "-" : String.format("%,d", (end - loaded) / Math.max(1, versions)),
                    retain > 0 ? "-" : String.format("%,d", (end - loaded) / Math.max(1, events)),
                    growth,
                    retain > 0 ? String.format("%.0f", pruneNanos / 1e6 / Math.max(1, passes)) : "-");
            System.out.println("    second half, MB by table:" + grew);
        }
    }

    /** The rulesync tables' size on disk: heap, TOAST and indexes. */
    private static long size(JdbcTemplate sql) {
        return sql.queryForObject(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                        + "c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'flyway_schema_history'",
                Long.class);
    }

    private static java.util.Map<String, Long> tables(JdbcTemplate sql) {
        java.util.Map<String, Long> out = new java.util.TreeMap<>();
        sql.query(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        + "WHERE n.nspname = 'public' AND c.relkind = 'r'",
                rs -> {
                    out.put(rs.getString(1), rs.getLong(2));
                });
        return out;
    }

    private static void vacuum(JdbcTemplate sql) {
        sql.execute("VACUUM");
    }
}
