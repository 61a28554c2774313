package io.rulesync.api.bench;

import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.flywaydb.core.Flyway;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * The harness behind BENCHMARKS.md for the api's read side: a cluster with VERSIONS versions and
 * NODES nodes (plus 9 small clusters) written straight into PostgreSQL in the compiler's schema,
 * the real api serving it, and a closed-loop load generator: CLIENTS concurrent clients, each
 * sending its next request when the last one answered, for SECONDS per query after a warm-up.
 * Prints per query the requests served, throughput, latency percentiles and response size.
 *
 * <p>With ACKS_PER_SECOND, node agents' acks stream in meanwhile at that rate, through the real
 * {@code POST .../nodes/{n}/acks} (one ack per request, the nodes in turn, each acking the newest version): the
 * queries are measured under that write load, and the harness prints the acks taken per second and the
 * transactions they took ({@code node_status} commits).
 *
 * <p>With QUERIES_PER_SECOND, each query is sent open loop instead, at that rate whatever the answers take (a
 * dashboard's or a team's steady reads, rather than clients that keep both cores busy by design); each latency is
 * timed from when its request was due, so a stalled api counts the requests it kept waiting.
 *
 * <p>{@code bench/api-queries [VERSIONS NODES CLIENTS SECONDS [QUERY [ACKS_PER_SECOND [QUERIES_PER_SECOND]]]]} (QUERY:
 * run only the queries whose name contains it, without the Apache Bench pass; "" for all); needs PostgreSQL on
 * 127.0.0.1:5432 (a database of its own is created and dropped).
 */
public final class ApiQueryBenchmark {
    private static final String CLUSTER = "bench";
    private static final ApiTokens.Issued VIEWER = ApiTokens.issue("bench", Role.VIEWER);
    private static final ApiTokens.Issued AGENT = ApiTokens.issue("bench-agents", Role.AGENT);

    private ApiQueryBenchmark() {}

    public static void main(String[] args) throws Exception {
        int versions = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int nodes = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        int clients = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 20;
        String only = args.length > 4 ? args[4] : "";
        int ackRate = args.length > 5 ? Integer.parseInt(args[5]) : 0;
        int queryRate = args.length > 6 ? Integer.parseInt(args[6]) : 0;
        String db = "rulesync_bench_api_" + UUID.randomUUID().toString().substring(0, 8);
        admin("CREATE DATABASE " + db);
        try {
            // The compiler migrates and the api only validates (store/README.md), so migrate as the compiler would.
            Flyway.configure()
                    .dataSource("jdbc:postgresql://127.0.0.1:5432/" + db, "postgres", "")
                    .load()
                    .migrate();
            ApiCommand command = new ApiCommand().withTokens(List.of(VIEWER.line(), AGENT.line()));
            new CommandLine(command).parseArgs("--port=0", "--db-url=jdbc:postgresql://127.0.0.1:5432/" + db);
            try (ConfigurableApplicationContext api = command.start()) {
                long t0 = System.nanoTime();
                load(db, versions, nodes);
                System.out.printf(
                        "loaded %,d versions and %,d nodes in %.1f s%n",
                        versions, nodes, (System.nanoTime() - t0) / 1e9);
                String base = "http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port") + "/api/v1";
                AckStream acks = ackRate > 0 ? new AckStream(base, nodes, versions, ackRate).start() : null;
                if (acks != null) {
                    // The acks' own warm-up (JIT, connections, the first backlog), so the first query is measured as
                    // the rest.
                    Thread.sleep(15_000);
                }
                io.micrometer.core.instrument.DistributionSummary batches = api.getBean(
                                io.micrometer.core.instrument.MeterRegistry.class)
                        .get("rulesync.acks.batch")
                        .summary();
                long t1 = System.nanoTime();
                long batches0 = batches.count();
                double acks0 = batches.totalAmount();
                run(base, versions, clients, queryRate, seconds, only, acks);
                if (only.isEmpty()) {
                    apacheBench(base, clients, seconds);
                }
                if (acks != null) {
                    acks.stop();
                    double s = (System.nanoTime() - t1) / 1e9;
                    System.out.printf(
                            "%nacks streaming in meanwhile: %,d sent (%.0f/s asked), %,d answered 204, %d failed; stored %.0f acks/s "
                                    + "in %.1f transactions/s (%.0f acks each); POST latency %s%n",
                            acks.sent.get(),
                            (double) ackRate,
                            acks.ok.get(),
                            acks.failed.get(),
                            (batches.totalAmount() - acks0) / s,
                            (batches.count() - batches0) / s,
                            (batches.totalAmount() - acks0) / Math.max(1, batches.count() - batches0),
                            queryRate > 0 ? "under each query above" : acks.latency());
                }
            }
        } finally {
            admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }

    /** The queries an operator's dashboard and scripts make, with their random parts. */
    private static Map<String, Supplier<String>> queries(int versions) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        Map<String, Supplier<String>> q = new LinkedHashMap<>();
        q.put("history, newest page (50)", () -> "/clusters/" + CLUSTER + "/versions?limit=50");
        q.put(
                "history, random page (50)",
                () -> "/clusters/" + CLUSTER + "/versions?before="
                        + (2 + ThreadLocalRandom.current().nextInt(versions - 1)) + "&limit=50");
        q.put(
                "one version's metadata",
                () -> "/clusters/" + CLUSTER + "/versions/"
                        + (1 + ThreadLocalRandom.current().nextInt(versions)));
        q.put(
                "events, random page (100)",
                () -> "/clusters/" + CLUSTER + "/events?after="
                        + ThreadLocalRandom.current().nextInt(versions) + "&limit=100");
        q.put("nodes, first page (500)", () -> "/clusters/" + CLUSTER + "/nodes");
        q.put("nodes, behind only", () -> "/clusters/" + CLUSTER + "/nodes?state=behind");
        q.put("nodes, all 5000 at once", () -> "/clusters/" + CLUSTER + "/nodes?limit=5000");
        q.put("clusters (10)", () -> "/clusters");
        q.put("audit of the cluster", () -> "/audit?cluster=" + CLUSTER);
        r.nextInt();
        return q;
    }

    /** Runs the queries whose name contains {@code only} (all when it is empty). */
    private static void run(
            String base, int versions, int clients, int queryRate, int seconds, String only, AckStream acks)
            throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        if (queryRate > 0) {
            System.out.printf(
                    "open loop, %d requests a second, %d s per query after a warm-up (5 s closed loop, then open until the JIT is quiet)%n",
                    queryRate, seconds);
        } else {
            System.out.printf("%d clients, closed loop, %d s per query after 3 s of warm-up%n", clients, seconds);
        }
        System.out.printf(
                "%-28s %9s %8s %8s %8s %8s %8s %10s%n",
                "query", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "bytes");
        for (Map.Entry<String, Supplier<String>> q : queries(versions).entrySet()) {
            if (!q.getKey().contains(only)) {
                continue;
            }
            Result res;
            if (queryRate > 0) {
                // Warm-up: 3 s at the open loop's rate is ~60 requests, too few for the JIT, whose compiler threads
                // then took
                // half of the two cores through the measured seconds (per-thread CPU from /proc). So first as fast as
                // the
                // clients go, then at the rate until the JIT is quiet: a long-running api's steady state, not its first
                // minute.
                drive(http, base, q.getValue(), clients, Duration.ofSeconds(5));
                long warm = System.nanoTime();
                java.lang.management.CompilationMXBean jit =
                        java.lang.management.ManagementFactory.getCompilationMXBean();
                long compiled;
                do {
                    compiled = jit.getTotalCompilationTime();
                    driveOpen(http, base, q.getValue(), queryRate, Duration.ofSeconds(3));
                } while (jit.getTotalCompilationTime() - compiled > 150 && System.nanoTime() - warm < 120e9);
                System.out.printf(
                        "  (warm after %.0f s at the rate; the JIT compiled for %d ms in the last 3 s)%n",
                        (System.nanoTime() - warm) / 1e9, jit.getTotalCompilationTime() - compiled);
                if (acks != null) {
                    acks.measureFromNow(); // the POSTs' latency while this query is measured, not during warm-ups
                }
                res = driveOpen(http, base, q.getValue(), queryRate, Duration.ofSeconds(seconds));
            } else {
                drive(http, base, q.getValue(), clients, Duration.ofSeconds(3));
                res = drive(http, base, q.getValue(), clients, Duration.ofSeconds(seconds));
            }
            long[] l = res.latencies();
            if (l.length == 0) {
                System.out.printf("%-28s none answered%n", q.getKey());
                continue;
            }
            Arrays.sort(l);
            System.out.printf(
                    "%-28s %9d %8.0f %8.1f %8.1f %8.1f %8.1f %10d%n",
                    q.getKey(),
                    l.length,
                    l.length / (double) seconds,
                    pct(l, 50),
                    pct(l, 90),
                    pct(l, 99),
                    l[l.length - 1] / 1e6,
                    res.bytes() / Math.max(1, l.length));
            if (acks != null && queryRate > 0) {
                System.out.printf("  (ack POSTs meanwhile: %s)%n", acks.latency());
            }
        }
    }

    /**
     * The fixed-URL queries again from a separate process, Apache Bench ({@code ab}, package
     * apache2-utils), when it is installed: its latencies exclude this JVM's own client work.
     */
    private static void apacheBench(String base, int clients, int seconds) throws Exception {
        Map<String, String> fixed = new LinkedHashMap<>();
        fixed.put("history, newest page (50)", "/clusters/" + CLUSTER + "/versions?limit=50");
        fixed.put("nodes, first page (500)", "/clusters/" + CLUSTER + "/nodes");
        fixed.put("nodes, all 5000 at once", "/clusters/" + CLUSTER + "/nodes?limit=5000");
        fixed.put("clusters (10)", "/clusters");
        System.out.printf("%nApache Bench (ab -k -c %d -t %d), a separate process:%n", clients, seconds);
        System.out.printf(
                "%-28s %9s %8s %8s %8s %8s %8s%n",
                "query", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms");
        for (Map.Entry<String, String> q : fixed.entrySet()) {
            Process p;
            try {
                p = new ProcessBuilder(
                                "ab",
                                "-q",
                                "-k",
                                "-c",
                                String.valueOf(clients),
                                "-t",
                                String.valueOf(seconds),
                                "-n",
                                "10000000",
                                "-H",
                                "Authorization: Bearer " + VIEWER.token(),
                                base + q.getValue())
                        .redirectErrorStream(true)
                        .start();
            } catch (java.io.IOException e) {
                System.out.println("(ab is not installed: apt-get install apache2-utils)");
                return;
            }
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            System.out.printf(
                    "%-28s %9s %8s %8s %8s %8s %8s%n",
                    q.getKey(),
                    field(out, "Complete requests:\\s+(\\d+)"),
                    field(out, "Requests per second:\\s+([\\d.]+)"),
                    field(out, "\\s50%\\s+(\\d+)"),
                    field(out, "\\s90%\\s+(\\d+)"),
                    field(out, "\\s99%\\s+(\\d+)"),
                    field(out, "\\s100%\\s+(\\d+)"));
            if (out.contains("Non-2xx responses")) {
                System.out.println(
                        "  (some responses were not 200: " + field(out, "Non-2xx responses:\\s+(\\d+)") + ")");
            }
        }
    }

    private static String field(String text, String regex) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher(text);
        return m.find() ? m.group(1) : "?";
    }

    /** Node agents' acks at a steady rate through the real endpoint, one ack per request, open loop. */
    private static final class AckStream {
        private final String base;
        private final int nodes;
        private final int rate;
        private final HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong ok = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private final List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        private final long version;
        private volatile long measuredSince = Long.MIN_VALUE;
        private final java.util.concurrent.ScheduledExecutorService timer =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t =
                            new Thread(r, "ack-stream"); // a daemon: a failed run ends instead of sending acks forever
                    t.setDaemon(true);
                    return t;
                });

        AckStream(String base, int nodes, int versions, int rate) {
            this.base = base;
            this.nodes = nodes;
            this.rate = rate;
            this.version = versions;
        }

        AckStream start() {
            // Every 10 ms, a hundredth of a second's acks.
            timer.scheduleAtFixedRate(
                    () -> {
                        for (int i = 0; i < Math.max(1, rate / 100); i++) {
                            long n = sent.getAndIncrement();
                            String node = String.format("node-%05d", n % nodes);
                            io.rulesync.model.ack.NodeAck a = new io.rulesync.model.ack.NodeAck(
                                    CLUSTER,
                                    node,
                                    version,
                                    version,
                                    io.rulesync.model.ack.NodeAck.Status.APPLIED,
                                    null,
                                    3,
                                    100,
                                    "hollow",
                                    java.time.Instant.now());
                            HttpRequest req = HttpRequest.newBuilder(
                                            URI.create(base + "/clusters/" + CLUSTER + "/nodes/" + node + "/acks"))
                                    .header("Authorization", "Bearer " + AGENT.token())
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString("[" + a.toJson() + "]"))
                                    .build();
                            long t0 = System.nanoTime();
                            http.sendAsync(req, HttpResponse.BodyHandlers.discarding())
                                    .whenComplete((r, e) -> {
                                        if (e == null && r.statusCode() == 204) {
                                            ok.incrementAndGet();
                                            if (t0 >= measuredSince) {
                                                latencies.add(System.nanoTime() - t0);
                                            }
                                        } else {
                                            failed.incrementAndGet();
                                        }
                                    });
                        }
                    },
                    0,
                    10,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
            return this;
        }

        /** Latencies count from now on: those of the ack stream's own warm-up are dropped. */
        void measureFromNow() {
            measuredSince = System.nanoTime();
            latencies.clear();
        }

        void stop() throws InterruptedException {
            timer.shutdownNow();
            timer.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
            Thread.sleep(2_000); // the last ones answered
        }

        String latency() {
            long[] l;
            synchronized (latencies) {
                l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            }
            return l.length == 0 ? "-" : String.format("p50 %.1f ms, p99 %.1f ms", pct(l, 50), pct(l, 99));
        }
    }

    private record Result(long[] latencies, long bytes) {}

    private static Result drive(HttpClient http, String base, Supplier<String> path, int clients, Duration d)
            throws Exception {
        long end = System.nanoTime() + d.toNanos();
        List<List<Long>> per = new ArrayList<>();
        AtomicLong bytes = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            List<Long> mine = new ArrayList<>();
            per.add(mine);
            Thread t = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path.get()))
                                .header("Authorization", "Bearer " + VIEWER.token())
                                .build();
                        long t0 = System.nanoTime();
                        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
                        mine.add(System.nanoTime() - t0);
                        if (r.statusCode() != 200) {
                            throw new IllegalStateException(
                                    req.uri() + " answered " + r.statusCode() + ": " + r.body());
                        }
                        bytes.addAndGet(r.body().length());
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        return new Result(
                per.stream().flatMap(List::stream).mapToLong(Long::longValue).toArray(), bytes.get());
    }

    /**
     * Requests at {@code rate} a second for {@code d}, each sent when due whether or not the last was answered; a
     * latency runs from when its request was due (so the time it waited to be sent counts), to its answer.
     */
    private static Result driveOpen(HttpClient http, String base, Supplier<String> path, int rate, Duration d)
            throws Exception {
        long start = System.nanoTime();
        long count = d.toSeconds() * rate;
        List<java.util.concurrent.CompletableFuture<Long>> answers = new ArrayList<>();
        AtomicLong bytes = new AtomicLong();
        Map<String, Integer> failures = new java.util.concurrent.ConcurrentSkipListMap<>();
        for (long k = 0; k < count; k++) {
            long due = start + k * 1_000_000_000L / rate;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
            HttpRequest req = HttpRequest.newBuilder(URI.create(base + path.get()))
                    .header("Authorization", "Bearer " + VIEWER.token())
                    .build();
            // An overloaded api answers 503 once its database pool has kept a request waiting 2 s: counted, and said.
            answers.add(http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
                    .handle((r, e) -> {
                        if (e != null || r.statusCode() != 200) {
                            failures.merge(
                                    e != null ? e.getClass().getSimpleName() : "HTTP " + r.statusCode(),
                                    1,
                                    Integer::sum);
                            return -1L;
                        }
                        bytes.addAndGet(r.body().length());
                        return System.nanoTime() - due;
                    }));
        }
        List<Long> latencies = new ArrayList<>();
        for (java.util.concurrent.CompletableFuture<Long> a : answers) {
            if (a.get() >= 0) {
                latencies.add(a.get());
            }
        }
        if (!failures.isEmpty()) {
            System.out.printf(
                    "  (%d of %d requests failed: %s)%n", answers.size() - latencies.size(), answers.size(), failures);
        }
        return new Result(latencies.stream().mapToLong(Long::longValue).toArray(), bytes.get());
    }

    private static double pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    /**
     * The history a long-lived cluster accumulates, in the compiler's schema: each version changed one
     * Service's fragment and came from one EndpointSlice event; the nodes joined at version 1, a few
     * more later; most nodes run the head, some lag, a few failed. Fragment bodies are not read by
     * these queries, so one small body stands for all.
     */
    private static void load(String db, int versions, int nodes) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/" + db, "postgres", "");
                Statement s = c.createStatement()) {
            s.execute(
                    "INSERT INTO fragment (hash, body, text_length) VALUES (repeat('a', 64), '\\x1f8b0800000000000003030000000000000000', 0)");
            for (int k = 0; k < 10; k++) {
                String cluster = k == 0 ? CLUSTER : "small-" + k;
                int v = k == 0 ? versions : 10;
                int n = k == 0 ? nodes : 50;
                String q = "'" + cluster + "'";
                s.execute(
                        "INSERT INTO version (cluster, seq, parent_seq, created_at, cause, settings, fragments_changed, nodes_changed) "
                                + "SELECT " + q + ", g, CASE WHEN g = 1 THEN NULL ELSE g - 1 END, now() - (" + v
                                + " - g) * interval '30 seconds', "
                                + "'{\"events\":1,\"topic\":\"rulesync.cluster-events\",\"partition\":0,\"firstOffset\":' || g || ',\"lastOffset\":' || g "
                                + "|| ',\"objects\":[\"EndpointSlice shop/svc-' || (g % 10000) || '-abcde\"]}', "
                                + "'{\"families\":[\"ipv4\"],\"clusterCIDRs\":[\"10.244.0.0/16\"],\"masqueradeAll\":false,\"masqueradeBit\":14,"
                                + "\"nodePortAddresses\":[]}', 2, CASE WHEN g = 1 THEN " + n
                                + " ELSE 0 END FROM generate_series(1, " + v + ") g");
                s.execute("INSERT INTO version_entry (cluster, seq, family, unit, variant, hash) SELECT " + q
                        + ", g, 'ipv4', "
                        + "'shop/svc-' || (g % 10000) || ':http/TCP', '*', repeat('a', 64) FROM generate_series(1, " + v
                        + ") g");
                s.execute("INSERT INTO version_node (cluster, seq, node, zone) SELECT " + q
                        + ", 1, 'node-' || lpad(i::text, 5, '0'), " + "'zone-' || (i % 3) FROM generate_series(1, " + n
                        + ") i");
                s.execute("INSERT INTO cluster_head (cluster, seq) VALUES (" + q + ", " + v + ")");
                // The head's entries, as BatchStore keeps them beside the history: the latest entry of each key.
                s.execute(
                        "INSERT INTO cluster_head_entry (cluster, family, unit, variant, hash, seq) SELECT DISTINCT ON (unit) "
                                + "cluster, family, unit, variant, hash, seq FROM version_entry WHERE cluster = " + q
                                + " ORDER BY unit, seq DESC");
                s.execute(
                        "INSERT INTO cluster_event (cluster, topic, partition, kafka_offset, event_type, kind, object_key, "
                                + "resource_version, observed_at, received_at, payload, version_seq) SELECT " + q
                                + ", 'rulesync.cluster-events', "
                                + k
                                + ", g, 'upsert', 'EndpointSlice', 'shop/svc-' || (g % 10000) || '-abcde', g::text, "
                                + "now() - (" + v
                                + " - g) * interval '30 seconds', now(), '{}', g FROM generate_series(1, " + v + ") g");
                // 90% converged, 8% a few versions behind, 2% failing on the head.
                s.execute(
                        "INSERT INTO node_status (cluster, node, running, last_version, last_status, last_error, last_error_version, "
                                + "last_error_at, duration_ms, rule_count, mode, acked_at, updated_at) SELECT " + q
                                + ", 'node-' || lpad(i::text, 5, '0'), "
                                + "CASE WHEN i % 50 = 0 THEN " + v + " - 1 WHEN i % 50 < 5 THEN " + v
                                + " - 1 - i % 7 ELSE " + v + " END, "
                                + "CASE WHEN i % 50 = 0 THEN " + v + " ELSE " + v
                                + " - CASE WHEN i % 50 < 5 THEN 1 + i % 7 ELSE 0 END END, "
                                + "CASE WHEN i % 50 = 0 THEN 'FAILED' ELSE 'APPLIED' END, "
                                + "CASE WHEN i % 50 = 0 THEN 'ipv4: iptables-restore exited 1' END, CASE WHEN i % 50 = 0 THEN "
                                + v + " END, "
                                + "CASE WHEN i % 50 = 0 THEN now() END, 120, 400000, 'iptables', now(), now() FROM generate_series(1, "
                                + n + ") i");
            }
            s.execute(
                    "INSERT INTO operator_action (cluster, action, to_version, actor, reason, requested_at, status, result_version, completed_at) "
                            + "SELECT '" + CLUSTER
                            + "', 'rollback', g * 100, 'ops', 'drill ' || g, now(), 'done', g * 100 + 1, now() "
                            + "FROM generate_series(1, 100) g WHERE g * 100 + 1 <= " + versions);
            s.execute("ANALYZE");
        }
    }

    private static void admin(String sql) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
