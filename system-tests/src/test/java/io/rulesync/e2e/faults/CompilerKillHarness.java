package io.rulesync.e2e.faults;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.VersionHistory;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import io.rulesync.watcher.publish.EventSink;
import io.rulesync.watcher.publish.KafkaEventSink;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Fault: the compiler killed with SIGKILL at random moments while a steady stream of changes arrives
 * (results: RELIABILITY.md). The compiler runs as a process of its own ({@code rulesync.jar compiler})
 * against an in-process KRaft broker and a PostgreSQL database of the harness's own; the changes come
 * through the watcher's real sink (one transactional writer for the cluster). KILLS times: wait until
 * the compiler is healthy, let it work for a random 0.5-3 s, kill it, start it again. Then the stream
 * stops, one last compiler catches up, and the harness checks that nothing was lost:
 * <ul>
 *   <li>every event delivered to Kafka is stored exactly once (the same payloads, as a multiset);</li>
 *   <li>the versions are 1..N without gap or duplicate;</li>
 *   <li>the newest version's rules are what the compiler's core gives for the final objects (what
 *       {@code ./rulesync compile} gives for them).</li>
 * </ul>
 * The cluster is test-support's {@link SyntheticCluster} (3 endpoints a Service, 3 nodes).
 * Usage: {@code faults/compiler-kill [KILLS SERVICES RATE]} (default 200 200 50: 200 Services, 50 changes/s).
 */
public final class CompilerKillHarness {
    private static final String CLUSTER = "faults";
    /** The nodes of the synthetic cluster ({@link SyntheticCluster}), whose endpoints run on node-0 to node-2. */
    private static final int NODES = 3;
    private static final int ENDPOINTS = 3;
    private static final Path KAFKA_CONFIG = kafkaConfig();

    private CompilerKillHarness() {
    }

    public static void main(String[] args) throws Exception {
        int kills = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int services = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        Path jar = Path.of(System.getProperty("rulesync.jar", "launcher/target/rulesync.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: build it with ./rulesync --help (or mvn -DskipTests package)");
        }
        String kafka = TestInfrastructure.kafkaBootstrapServers();
        String topic = Topics.DEFAULT.events(); // the harness's broker is its own
        boolean ok;
        try (TestDatabase db = TestDatabase.create()) {
            System.out.printf("compiler killed %d times; %d Services x %d endpoints over %d nodes, %d changes/s; topic %s%n",
                    kills, services, ENDPOINTS, NODES, rate, topic);
            Stream stream = new Stream(kafka, topic, services, rate);
            Thread sender = new Thread(stream::run, "faults-sender");
            sender.setDaemon(true);
            java.util.concurrent.atomic.AtomicReference<Throwable> senderFailed = new java.util.concurrent.atomic.AtomicReference<>();
            sender.setUncaughtExceptionHandler((t, e) -> {
                senderFailed.set(e);
                stream.stop();
            });
            sender.start();

            Random random = new Random(kills);
            List<Long> startups = new ArrayList<>();
            List<Long> takeovers = new ArrayList<>();
            JdbcTemplate positions = new JdbcTemplate(db.dataSource());
            for (int k = 0; k < kills; k++) {
                long before = committed(positions);
                Compiler c = Compiler.start(jar, kafka, db);
                startups.add(c.awaitHealthy(Duration.ofSeconds(120)));
                // Working, not just started: it was assigned the partitions and committed a batch of its own.
                while (committed(positions) <= before) {
                    if (System.nanoTime() - c.startedAt() > Duration.ofSeconds(120).toNanos()) {
                        throw new IllegalStateException("the compiler committed nothing within 120 s of its start");
                    }
                    Thread.sleep(100);
                }
                takeovers.add((System.nanoTime() - c.startedAt()) / 1_000_000);
                Thread.sleep(500 + random.nextInt(2500));
                c.kill();
                if ((k + 1) % 20 == 0) {
                    System.out.printf("  %d kills, %,d events sent%n", k + 1, stream.delivered().size());
                }
            }
            stream.stop();
            sender.join();

            Compiler last = Compiler.start(jar, kafka, db);
            last.awaitHealthy(Duration.ofSeconds(120));
            JdbcTemplate sql = new JdbcTemplate(db.dataSource());
            List<String> sent = stream.delivered();
            long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            long stored;
            while ((stored = count(sql, "SELECT count(*) FROM cluster_event WHERE cluster = ?")) < sent.size()
                    && System.nanoTime() < deadline) {
                Thread.sleep(500);
            }
            Thread.sleep(2000); // a duplicate would show up after the count was reached
            last.stop();

            List<String> failures = new ArrayList<>();
            if (senderFailed.get() != null) {
                failures.add("the stream of changes stopped: " + senderFailed.get());
            }
            List<String> payloads = sql.queryForList("SELECT payload FROM cluster_event WHERE cluster = ? ORDER BY id", String.class,
                    CLUSTER);
            if (!multiset(payloads).equals(multiset(sent))) {
                failures.add("events: " + sent.size() + " delivered, " + payloads.size() + " stored, and not the same ones");
            }
            Map<String, Object> v = sql.queryForMap("SELECT count(*) AS n, coalesce(min(seq), 0) AS lo, coalesce(max(seq), 0) AS hi "
                    + "FROM version WHERE cluster = ?", CLUSTER);
            long versions = ((Number) v.get("n")).longValue();
            if (versions == 0 || ((Number) v.get("lo")).longValue() != 1 || ((Number) v.get("hi")).longValue() != versions) {
                failures.add("versions: " + v + " is not 1..N without gaps");
            }
            VersionHistory history = new VersionHistory(db.dataSource());
            ClusterRules newest = history.rules(CLUSTER, history.head(CLUSTER));
            ClusterRules expected = ClusterCompiler.compile(stream.finalState(), ClusterSettings.DEFAULT).rules();
            if (!newest.equals(expected)) {
                failures.add("rules: the newest version's differ from the compile of the final objects");
            }
            long[] s = startups.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] t = takeovers.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf("kills: %d; compiler start to healthy: median %.1f s, max %.1f s; to its first committed batch: "
                    + "median %.1f s, max %.1f s%n", kills, s[s.length / 2] / 1000.0, s[s.length - 1] / 1000.0,
                    t[t.length / 2] / 1000.0, t[t.length - 1] / 1000.0);
            System.out.printf("events: %,d delivered, %,d stored (%d refused sends retried by the sink); versions: %,d, 1..%d%n",
                    sent.size(), payloads.size(), stream.retried(), versions, versions);
            System.out.printf("rules of the newest version (%,d fragments) equal the compile of the final objects: %s%n",
                    newest.fragments().size(), newest.equals(expected));
            System.out.println(failures.isEmpty() ? "RESULT: nothing lost" : "RESULT: FAILED: " + String.join("; ", failures));
            ok = failures.isEmpty();
        }
        // After the database is dropped (closing it above), not inside: an exit there would leave it behind.
        System.exit(ok ? 0 : 1);
    }

    /** The sum of the compiler's stored positions: it grows with every committed batch. */
    private static long committed(JdbcTemplate sql) {
        return sql.queryForObject("SELECT coalesce(sum(next_offset), 0) FROM consumer_position", Long.class);
    }

    private static Path kafkaConfig() {
        try {
            Path p = Files.createTempFile("faults-kafka-", ".properties");
            p.toFile().deleteOnExit();
            Files.writeString(p, "session.timeout.ms=6000\nheartbeat.interval.ms=1000\n");
            return p;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long count(JdbcTemplate sql, String query) {
        return sql.queryForObject(query, Long.class, CLUSTER);
    }

    private static Map<String, Integer> multiset(List<String> values) {
        Map<String, Integer> m = new HashMap<>();
        values.forEach(v -> m.merge(v, 1, Integer::sum));
        return m;
    }

    /** The compiler as a process of its own. */
    private record Compiler(Process process, int port, long startedAt) {
        static Compiler start(Path jar, String kafka, TestDatabase db) throws IOException {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx768m", "-jar",
                    jar.toString(), "compiler", "--kafka", kafka, "--db-url", db.url(), "--db-user", db.user(), "--port",
                    Integer.toString(port)));
            cmd.addAll(db.passwordOptions());
            // A killed member holds its partitions until its session expires (Kafka's default: 45 s); the harness
            // kills every few seconds, so its compilers use a short session, as a deployment that wants fast failover would.
            cmd.addAll(List.of("--kafka-config", KAFKA_CONFIG.toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(Path.of("target", "faults-compiler.log").toFile())).start();
            return new Compiler(p, port, System.nanoTime());
        }

        /** Milliseconds from the start until its health endpoint says UP. */
        long awaitHealthy(Duration timeout) throws Exception {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            long deadline = startedAt + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("the compiler exited with " + process.exitValue() + " (see target/faults-compiler.log)");
                }
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
                            .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200 && r.body().contains("\"UP\"")) {
                        return (System.nanoTime() - startedAt) / 1_000_000;
                    }
                } catch (IOException e) {
                    // not listening yet
                }
                Thread.sleep(200);
            }
            throw new IllegalStateException("the compiler was not healthy within " + timeout);
        }

        /** SIGKILL: no shutdown hook, no flush, no goodbye. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor();
        }

        void stop() throws InterruptedException {
            process.destroy();
            process.waitFor();
        }
    }

    /**
     * The steady stream: the cluster's nodes and Services first, then endpoint moves of random Services at
     * RATE per second, through the watcher's transactional sink, retried until delivered (as the watcher's
     * publisher does). Remembers every payload delivered and the final state.
     */
    private static final class Stream {
        private final KafkaEventSink sink;
        private final int services;
        private final int rate;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<String> delivered = new ArrayList<>();
        private final Map<String, ClusterObject> state = new TreeMap<>();
        private final Random random = new Random(1);
        private final int[] generation;
        private long retried;

        Stream(String kafka, String topic, int services, int rate) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "faults");
            this.sink = KafkaEventSink.create(p, topic);
            this.services = services;
            this.rate = rate;
            this.generation = new int[services];
        }

        void run() {
            List<ClusterEvent> initial = new ArrayList<>();
            initial.add(new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Instant.now()));
            for (int n = 0; n < NODES; n++) {
                initial.add(upsert(SyntheticCluster.node(n)));
            }
            for (int i = 0; i < services; i++) {
                initial.add(upsert(SyntheticCluster.service(i)));
                initial.add(upsert(SyntheticCluster.slice(i, ENDPOINTS, 0)));
            }
            for (int from = 0; from < initial.size(); from += 100) {
                send(initial.subList(from, Math.min(initial.size(), from + 100)));
            }
            long next = System.nanoTime();
            while (running.get()) {
                int i = random.nextInt(services);
                send(List.of(upsert(SyntheticCluster.slice(i, ENDPOINTS, ++generation[i]))));
                next += 1_000_000_000L / rate;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            sink.close();
        }

        private ClusterEvent upsert(ClusterObject o) {
            return new ClusterEvent.ObjectUpserted(CLUSTER, o, "1", Instant.now());
        }

        private void send(List<ClusterEvent> events) {
            while (true) {
                EventSink.Delivery d = sink.send(events);
                if (d.allDelivered()) {
                    synchronized (this) {
                        for (ClusterEvent e : events) {
                            delivered.add(EventCodec.encode(e));
                            if (e instanceof ClusterEvent.ObjectUpserted u) {
                                state.put(ObjectRef.of(u.object()).toString(), u.object());
                            }
                        }
                    }
                    return;
                }
                if (!d.dropped().isEmpty()) {
                    throw new IllegalStateException("the sink dropped events: " + d.error());
                }
                retried += d.failed().cardinality();
                events = Arrays.stream(d.failed().stream().toArray()).mapToObj(events::get).toList();
            }
        }

        void stop() {
            running.set(false);
        }

        synchronized List<String> delivered() {
            return List.copyOf(delivered);
        }

        synchronized long retried() {
            return retried;
        }

        synchronized ClusterState finalState() {
            List<Service> svcs = new ArrayList<>();
            List<EndpointSlice> slices = new ArrayList<>();
            List<Node> nodes = new ArrayList<>();
            for (ClusterObject o : state.values()) {
                if (o instanceof Service s) {
                    svcs.add(s);
                } else if (o instanceof EndpointSlice s) {
                    slices.add(s);
                } else {
                    nodes.add((Node) o);
                }
            }
            return ClusterState.of(svcs, slices, nodes);
        }
    }
}
