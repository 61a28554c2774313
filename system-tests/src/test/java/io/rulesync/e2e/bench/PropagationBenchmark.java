package io.rulesync.e2e.bench;

import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.ApiSnapshots;
import io.rulesync.agent.feed.Transport;
import io.rulesync.agent.mode.HollowMode;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.api.stream.NodeStreams;
import io.rulesync.client.ApiClient;
import io.rulesync.compiler.bench.EventClock;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.e2e.AgentTokens;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import picocli.CommandLine;

/**
 * Network programming latency, end to end: a change event enters the events topic (where the
 * watcher puts it) → compiler → PostgreSQL → the agents' transport → agents apply → acks to the api.
 * Measured per event: from sending it to the arrival of the acks of every agent of its cluster, and of the
 * real-kernel agent (iptables-restore into a network namespace), for the version that covers it.
 * Real KRaft broker, PostgreSQL, compiler and api; each cluster SERVICES x ENDPOINTS, the cluster of
 * {@link PipelineBenchmark} (every 10th Service a NodePort with externalTrafficPolicy Local).
 *
 * <p>Most agents are hollow ({@link HollowMode}): the agent's real feed, snapshots, validation,
 * sequencing and acks, no kernel, so that many of them measure the control plane and the fan-out rather than this
 * machine's cores applying rules. They run in a child process under {@code nice -n 19} ({@link HollowFleet}): in
 * this process their work (every delta parsed and checked by every agent) starved the control plane's
 * single-threaded parts. The first cluster may also have dry-run agents (the in-memory kernel) and one real-kernel
 * agent, whose own apply times are reported beside the fan-out.
 *
 * <p>TRANSPORT says how agents get deltas and send acks: {@code api} (a watch and POSTs to the api) or {@code kafka}
 * (the deltas topic, and acks POSTed to the api). Either way an ack counts when PostgreSQL records it in {@code node_status} (read every
 * 20 ms), what {@code GET /nodes} shows.
 *
 * <p>Two shapes of arguments, both needing PostgreSQL on 127.0.0.1:5432, and root with iptables for the real-kernel
 * agent (left out otherwise):
 * <ul>
 *   <li>{@code bench/propagation [SERVICES ENDPOINTS DRY_RUN_AGENTS RATE SECONDS REAL_AGENT(0|1) HOLLOW_AGENTS TRANSPORT]}:
 *       one cluster;</li>
 *   <li>{@code bench/fleet CLUSTERS SERVICES ENDPOINTS AGENTS_PER_CLUSTER RATE SECONDS [TRANSPORT]} ({@link FleetBenchmark}):
 *       many clusters, RATE changes a second across all of them, each to the next cluster in turn; the first
 *       cluster's agents include one dry-run and one real-kernel agent.</li>
 * </ul>
 */
public final class PropagationBenchmark {
    private final Topics topics = Topics.DEFAULT;
    /**
     * "cluster/node" → highest version acked (APPLIED), and when (nanoTime) each version was first reached; a cluster's
     * versions are its own, so every figure is kept per cluster and node.
     */
    private final Map<String, Long> acked = new ConcurrentHashMap<>();

    private final Map<String, Map<Long, Long>> ackedAt = new ConcurrentHashMap<>();
    /** "cluster/node" → durations (ms) of its APPLIED acks while recording. */
    private final Map<String, List<Long>> applyMillis = new ConcurrentHashMap<>();

    private volatile boolean recording;
    private final Transport transport;
    /** With the stream transport: thin hollow agents ({@link ThinFleet}), or full ones ({@link HollowFleet}). */
    private final boolean thin;
    /** One agent ("cluster/node") whose acks are late and whose reads are throttled, or null. */
    private final String slowNode;
    /** Where the api serves node streams (set once it runs): both replicas' with a second one. */
    private String streams;
    /** A second api replica in a process of its own, killed halfway through the steady phase; or null. */
    private Process replica;

    private final boolean twoReplicas;
    private final AgentClients clients = new AgentClients();
    /** The hollow agents' process, if any: its CPU time is reported apart. */
    private Process fleet;

    private volatile boolean fleetClosing;
    /** When the hollow fleet's JVM was warm and started its agents, all at once (nanoTime). */
    private final java.util.concurrent.CompletableFuture<Long> fleetWarm =
            new java.util.concurrent.CompletableFuture<>();

    /**
     * One cluster of a run and its agents, numbered node-0 on: first the dry-run ones, then the hollow ones, then the
     * real-kernel one if any. Its clock times its events, whose offsets are those of the one partition it is keyed to.
     */
    record Cluster(String name, int dryRun, int hollow, boolean real, EventClock clock) {
        Cluster(String name, int dryRun, int hollow, boolean real) {
            this(name, dryRun, hollow, real, new EventClock());
        }

        int nodes() {
            return dryRun + hollow + (real ? 1 : 0);
        }

        /** The simulated agents' keys (dry-run and hollow), as acks are kept. */
        List<String> simulated() {
            return java.util.stream.IntStream.range(0, dryRun + hollow)
                    .mapToObj(n -> key(name, "node-" + n))
                    .toList();
        }

        String realNode() {
            return "node-" + (dryRun + hollow);
        }

        /** Every agent's key, the real-kernel one's too. */
        List<String> agents() {
            List<String> all = new ArrayList<>(simulated());
            if (real) {
                all.add(key(name, realNode()));
            }
            return all;
        }
    }

    PropagationBenchmark(Transport transport) {
        this(transport, transport == Transport.STREAM, null);
    }

    PropagationBenchmark(Transport transport, boolean thin, String slowNode) {
        this(transport, thin, slowNode, false);
    }

    /** @param twoReplicas a second api replica serves streams too, and is killed halfway through the steady phase */
    PropagationBenchmark(Transport transport, boolean thin, String slowNode, boolean twoReplicas) {
        if (thin && transport != Transport.STREAM) {
            throw new IllegalArgumentException("thin agents speak the stream transport only");
        }
        if (twoReplicas && transport != Transport.STREAM) {
            throw new IllegalArgumentException("a second replica is measured with the stream transport only");
        }
        this.transport = transport;
        this.thin = thin;
        this.slowNode = slowNode;
        this.twoReplicas = twoReplicas;
    }

    public static void main(String[] args) throws Exception {
        int services = arg(args, 0, 10_000);
        int endpoints = arg(args, 1, 10);
        int dryRun = arg(args, 2, 20);
        int rate = arg(args, 3, 10);
        int seconds = arg(args, 4, 30);
        boolean realAgent = arg(args, 5, 1) == 1;
        int hollow = arg(args, 6, 0);
        PropagationBenchmark bench =
                new PropagationBenchmark(args.length > 7 ? Transport.parse(args[7]) : Transport.STREAM);
        if (realAgent && !kernelAvailable()) {
            System.out.println("no real-kernel agent: needs root and iptables-restore");
        }
        bench.run(
                List.of(new Cluster("bench", dryRun, hollow, realAgent && kernelAvailable())),
                services,
                endpoints,
                rate,
                seconds);
        System.exit(0);
    }

    void run(List<Cluster> shape, int services, int endpoints, int rate, int seconds) throws Exception {
        Map<String, Cluster> byName = new HashMap<>();
        shape.forEach(c -> byName.put(c.name(), c));
        Cluster first = shape.get(0);
        int hollowAgents = shape.stream().mapToInt(Cluster::hollow).sum();
        int dryRunAgents = first.dryRun();
        int simulated = dryRunAgents + hollowAgents;
        boolean kernel = first.real();
        String realKey = key(first.name(), first.realNode());
        String db = "rulesync_bench_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        PipelineBenchmark.admin("CREATE DATABASE " + db);
        String ns = "rs-prop-bench-" + ProcessHandle.current().pid();
        EmbeddedKafkaKraftBroker kafka = new EmbeddedKafkaKraftBroker(1, 6, topics.events(), topics.deltas());
        kafka.afterPropertiesSet();
        List<AutoCloseable> close = new ArrayList<>();
        Path state = Files.createTempDirectory("rulesync-bench-state");
        try {
            String bootstrap = kafka.getBrokersAsString();
            Map<String, Object> props = new HashMap<>();
            props.put("spring.datasource.url", "jdbc:postgresql://127.0.0.1:5432/" + db);
            props.put("spring.datasource.username", "postgres");
            props.put("spring.kafka.bootstrap-servers", bootstrap);
            props.put("spring.main.banner-mode", "off");
            props.put("logging.level.root", "WARN");
            // Each cluster's versions are timed by its own clock: its events' offsets are those of its one partition.
            PartitionProcessor.VersionListener listener =
                    (cluster, seq, diff, cause) -> byName.get(cluster).clock().stored(cluster, seq, diff, cause);
            ConfigurableApplicationContext compiler = new SpringApplicationBuilder(CompilerApplication.class)
                    .web(WebApplicationType.NONE)
                    .properties(props)
                    .initializers(ctx -> ((org.springframework.context.support.GenericApplicationContext) ctx)
                            .registerBean(PartitionProcessor.VersionListener.class, () -> listener))
                    .run();
            close.add(compiler::close);
            tokenLines = tokenLines(shape);
            ApiCommand apiCommand = new ApiCommand().withTokens(tokenLines);
            new CommandLine(apiCommand)
                    .parseArgs(
                            "--port=0",
                            "--stream-port=0",
                            "--address=127.0.0.1",
                            "--db-url=jdbc:postgresql://127.0.0.1:5432/" + db);
            ConfigurableApplicationContext api = apiCommand.start();
            close.add(api::close);
            URI apiUrl = URI.create("http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port"));
            streams = "127.0.0.1:" + api.getBean(NodeStreamServer.class).port();
            if (twoReplicas) {
                int port = startReplica(db);
                close.add(() -> replica.destroyForcibly());
                streams += ",127.0.0.1:" + port;
                System.out.println("a second api replica (pid " + replica.pid() + ") serves streams on port " + port
                        + "; each agent picks one of the two at random");
            }

            // When a node acked a version is when PostgreSQL records it (node_status), what GET /nodes shows: the same
            // point
            // for both transports, read every 20 ms.
            String url = "jdbc:postgresql://127.0.0.1:5432/" + db;
            Thread status = new Thread(() -> watchNodeStatus(url), "node-status-reader");
            status.setDaemon(true);
            status.start();
            System.out.printf(
                    "agents' transport: %s%s; %d cluster%s of %d Services × %d endpoints%n",
                    transport.id(),
                    thin ? " (thin hollow agents)" : hollowAgents > 0 ? " (full hollow agents)" : "",
                    shape.size(),
                    shape.size() == 1 ? "" : "s",
                    services,
                    endpoints);

            try (KafkaProducer<String, String> producer = PipelineBenchmark.producer(bootstrap)) {
                long t0 = System.nanoTime();
                int events = 0;
                Map<Cluster, Long> loaded = new java.util.LinkedHashMap<>();
                for (Cluster c : shape) {
                    List<String> load = new ArrayList<>();
                    load.add(EventCodec.encode(
                            new ClusterEvent.SettingsChanged(c.name(), ClusterSettings.DEFAULT, Instant.now())));
                    for (int n = 0; n < c.nodes(); n++) {
                        load.add(up(c.name(), PipelineBenchmark.node(n)));
                    }
                    for (int i = 0; i < services; i++) {
                        load.add(up(c.name(), PipelineBenchmark.service(i)));
                        load.add(up(c.name(), PipelineBenchmark.slice(i, endpoints, c.nodes(), 0)));
                    }
                    loaded.put(c, send(producer, c, load));
                    events += load.size();
                }
                loaded.forEach((c, offset) -> c.clock().awaitStored(offset));
                System.out.printf(
                        "initial load: %,d events stored in %.1f s%n", events, (System.nanoTime() - t0) / 1e9);

                List<String> agentKeys = new ArrayList<>();
                for (int n = 0; n < dryRunAgents; n++) {
                    String node = "node-" + n;
                    close.add(agent(
                            bootstrap,
                            apiUrl,
                            first.name(),
                            node,
                            new MemoryNetfilter(IpFamily.IPV4, null, node),
                            state));
                }
                shape.forEach(c -> agentKeys.addAll(c.agents()));
                long heapBefore = heapAfterGc();
                if (hollowAgents > 0) {
                    close.add(hollowFleet(apiUrl, shape, bootstrap));
                }
                if (kernel) {
                    run("ip", "netns", "add", ns);
                    close.add(agent(
                            bootstrap,
                            apiUrl,
                            first.name(),
                            first.realNode(),
                            new IptablesNetfilter(
                                    IpFamily.IPV4,
                                    HostCommand.PROCESSES.inNetns(ns),
                                    IptablesNetfilter.Printer.KERNEL_FORM),
                            state));
                }
                Map<String, Long> heads = new HashMap<>();
                shape.forEach(c -> heads.put(c.name(), c.clock().head()));
                t0 = System.nanoTime();
                // A cold start: the hollow agents all start at once in a warm JVM (as each node's own JVM would be its
                // own), and what it costs the control plane is measured until every agent has acked its cluster's head.
                if (hollowAgents > 0) {
                    t0 = fleetWarm.get();
                }
                MeterRegistry meters = api.getBean(MeterRegistry.class);
                long coldCpu0 = controlCpuNanos();
                long coldPostgres0 = postgresCpuNanos();
                double bytes0 = snapshotBytes(meters);
                long sent0 = meters.get("rulesync.snapshot.bytes")
                        .tag("encoding", "gzip")
                        .summary()
                        .count();
                Broker coldBroker0 = Broker.read();
                // Inside the measured time: polls at once, then every 100 ms; a benchmark has no deadline.
                await("every agent at its cluster's head")
                        .forever()
                        .pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(100))
                        .until(() ->
                                agentKeys.stream().allMatch(k -> acked.getOrDefault(k, 0L) >= heads.get(clusterOf(k))));
                double coldSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf(
                        "agents started and at their cluster's head in %.1f s (%d dry-run, %d hollow%s)%n",
                        coldSeconds,
                        dryRunAgents,
                        hollowAgents,
                        kernel ? " + 1 real-kernel agent, full load through iptables-restore" : "");
                long snapshotsSent = meters.get("rulesync.snapshot.bytes")
                                .tag("encoding", "gzip")
                                .summary()
                                .count()
                        - sent0;
                double mb = (snapshotBytes(meters) - bytes0) / 1e6;
                System.out.printf(
                        "cold start: %d snapshots, %.1f MB sent gzip (%.0f kB each); CPU: control plane process %.1f s, "
                                + "PostgreSQL %.1f s; broker: %s%n",
                        snapshotsSent,
                        mb,
                        mb * 1e3 / Math.max(1, snapshotsSent),
                        (controlCpuNanos() - coldCpu0) / 1e9,
                        (postgresCpuNanos() - coldPostgres0) / 1e9,
                        Broker.read().since(coldBroker0, coldSeconds));
                if (transport == Transport.STREAM) {
                    // What the streams hold in the api (and what the cold start left in its caches: an upper bound).
                    long open = api.getBean(NodeStreams.class).open();
                    long heap = heapAfterGc() - heapBefore;
                    System.out.printf(
                            "the api's heap with %d streams open: %+.0f MB after a full GC (%.0f kB a stream, with what the cold"
                                    + " start left in its caches)%n",
                            open, heap / 1e6, heap / 1e3 / Math.max(1, open));
                }
                if (fleet != null) {
                    System.out.println("memory: " + fleetHeap(hollowAgents));
                    System.out.println("the hollow fleet's collections so far: "
                            + fleetGc().since(Gc.NONE));
                }

                // Warm-up: 20 s of the same changes, not recorded. The path a version takes after the start (deltas
                // parsed,
                // checked and acked by every agent, written to every watch) has not run yet, and cold it ran
                // interpreted in
                // hundreds of agent threads queued for the JIT: the first recorded changes measured a 15 s stall.
                awaitAll(changes(producer, shape, services, endpoints, rate, rate * 20, 50_000));
                // Then on until the JIT compilers are quiet, here and in the fleet (under 100 ms of their CPU in 10 s,
                // for at
                // most 3 minutes): a control plane runs for days, and its compilation is paid once, not per node. On
                // two
                // cores a compiler thread busy for a second also starves the simulated nodes, which the latency shows.
                long warmed0 = System.nanoTime();
                int generation = 60_000;
                while (System.nanoTime() - warmed0 < 180_000_000_000L) {
                    long jit0 = jitNanos();
                    awaitAll(changes(producer, shape, services, endpoints, rate, rate * 10, generation));
                    generation += rate * 10;
                    if (jitNanos() - jit0 < 100_000_000L) {
                        break;
                    }
                }
                System.out.printf(
                        "warmed up: 20 s of changes, then %.0f s until the JIT compilers were quiet%n",
                        (System.nanoTime() - warmed0) / 1e9);
                idle();
                // Steady endpoint changes; each event's latency is measured to every agent of its cluster acking its
                // version.
                recording = true;
                long cpu0 = controlCpuNanos();
                Map<String, Long> threads0 = cpuByThreadGroup();
                long[] gc0 = gcTotals();
                long fleetCpu0 = fleetCpuNanos();
                Map<String, Long> fleetThreads0 =
                        fleet == null ? Map.of() : cpuByThreadGroup(Long.toString(fleet.pid()));
                Gc fleetGc0 = fleetGc();
                long postgresCpu0 = postgresCpuNanos();
                Broker broker0 = Broker.read();
                Postgres pg0 = postgres(url);
                long ackBatches0 = meters.get("rulesync.acks.write").timer().count();
                double acksWritten0 =
                        meters.get("rulesync.acks.batch").summary().totalAmount();
                double frames0 = transport == Transport.STREAM
                        ? meters.get("rulesync.streams.frames").counter().count()
                        : 0;
                double frameBytes0 = transport == Transport.STREAM
                        ? meters.get("rulesync.streams.frame.bytes").counter().count()
                        : 0;
                long steady0 = System.nanoTime();
                // A timeline of the api's counters every 50 ms, to show what stopped when a change was slow.
                List<long[]> timeline = java.util.Collections.synchronizedList(new ArrayList<>());
                java.util.concurrent.ScheduledExecutorService sampler =
                        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                                r -> new Thread(r, "timeline-sampler"));
                if (transport == Transport.STREAM) {
                    sampler.scheduleAtFixedRate(
                            () -> timeline.add(new long[] {
                                System.nanoTime(),
                                (long) meters.get("rulesync.streams.frames")
                                        .counter()
                                        .count(),
                                (long) meters.get("rulesync.streams.acks")
                                        .counter()
                                        .count(),
                                (long) meters.get("rulesync.acks.batch")
                                        .summary()
                                        .totalAmount()
                            }),
                            0,
                            50,
                            java.util.concurrent.TimeUnit.MILLISECONDS);
                }
                NodeStreams mine = api.getBean(NodeStreams.class);
                int before = mine.open();
                long[] moved = new long[2];
                Thread killer = null;
                if (replica != null) {
                    long replicaCpu = replica.info()
                            .totalCpuDuration()
                            .map(Duration::toNanos)
                            .orElse(0L);
                    replicaCpu0 = replicaCpu;
                    killer = new Thread(
                            () -> {
                                try {
                                    Thread.sleep(seconds * 500L);
                                    replicaCpuAtKill = replica.info()
                                            .totalCpuDuration()
                                            .map(Duration::toNanos)
                                            .orElse(0L);
                                    postgresCpuNanos(); // its backends' CPU, read before they go
                                    long k = System.nanoTime();
                                    killedAt = k;
                                    replica.destroyForcibly(); // SIGKILL: a crash, not a graceful stop
                                    // Its nodes reconnect with jitter and pick again among the replicas: here the one
                                    // left.
                                    while (mine.open() < simulated && System.nanoTime() - k < 60_000_000_000L) {
                                        Thread.sleep(10);
                                    }
                                    moved[0] = System.nanoTime() - k;
                                    moved[1] = mine.open();
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            },
                            "replica-killer");
                    killer.start();
                }
                List<Change> recorded = changes(producer, shape, services, endpoints, rate, rate * seconds, 100);
                awaitAll(recorded);
                sampler.shutdownNow();
                if (killer != null) {
                    killer.join();
                    System.out.printf(
                            "a replica killed halfway: this one went from %d streams to %d in %.1f s%n",
                            before, moved[1], moved[0] / 1e9);
                }
                double steadySeconds = (System.nanoTime() - steady0) / 1e9;
                // CPU of the steady phase, per agent and version delivered: what the transport costs.
                double agentVersions = 0;
                for (Cluster c : shape) {
                    LongSummaryStatistics v = recorded.stream()
                            .filter(ch -> ch.cluster() == c)
                            .mapToLong(Change::version)
                            .summaryStatistics();
                    if (v.getCount() > 0) {
                        agentVersions += (double) (c.dryRun() + c.hollow()) * (v.getMax() - v.getMin() + 1);
                    }
                }
                double control = (controlCpuNanos() - cpu0) / 1e6;
                if (replica != null) {
                    // The second replica's CPU until it was killed (its process's own count; a crash leaves nothing
                    // after).
                    control += (replicaCpuAtKill - replicaCpu0) / 1e6;
                }
                Map<String, Long> threads1 = cpuByThreadGroup();
                double fleetMs = (fleetCpuNanos() - fleetCpu0) / 1e6;
                double pg = (postgresCpuNanos() - postgresCpu0) / 1e6;
                System.out.printf(
                        "CPU in the steady phase: control plane process (broker, compiler, api%s) %.1f s, PostgreSQL %.1f s, "
                                + "hollow agents' process %.1f s; per agent and version: %.2f ms + %.2f ms + %.2f ms (%,.0f agent-versions)%n",
                        "",
                        control / 1e3,
                        pg / 1e3,
                        fleetMs / 1e3,
                        control / agentVersions,
                        pg / agentVersions,
                        fleetMs / agentVersions,
                        agentVersions);
                long ackBatches = meters.get("rulesync.acks.write").timer().count() - ackBatches0;
                System.out.printf(
                        "control plane JVM's collections in the steady phase: %s; ack batches written: %d of %.0f acks on average,"
                                + " longest %.0f ms%n",
                        gcSince(gc0),
                        ackBatches,
                        (meters.get("rulesync.acks.batch").summary().totalAmount() - acksWritten0)
                                / Math.max(1, ackBatches),
                        meters.get("rulesync.acks.write").timer().max(java.util.concurrent.TimeUnit.MILLISECONDS));
                if (transport == Transport.STREAM) {
                    double frames =
                            meters.get("rulesync.streams.frames").counter().count() - frames0;
                    System.out.printf(
                            "frames written to streams in the steady phase: %.0f, %.0f bytes each on average, as they travel%n",
                            frames,
                            (meters.get("rulesync.streams.frame.bytes")
                                                    .counter()
                                                    .count()
                                            - frameBytes0)
                                    / Math.max(1, frames));
                }
                // Where the control plane process's CPU went, by thread: what to work on next.
                double versions = agentVersions;
                System.out.println("this process by thread, per agent and version: "
                        + busiest(threads0, threads1, 14, name -> true, 1e3 * versions, "µs"));
                if (fleet != null) {
                    Map<String, Long> fleetThreads1 = cpuByThreadGroup(Long.toString(fleet.pid()));
                    System.out.println("the hollow fleet by thread, per agent and version: "
                            + busiest(fleetThreads0, fleetThreads1, 8, name -> true, 1e3 * versions, "µs"));
                }
                System.out.printf(
                        "in the steady phase (%.1f s): %s; broker: %s%n",
                        steadySeconds,
                        postgres(url).since(pg0, steadySeconds),
                        Broker.read().since(broker0, steadySeconds));
                if (fleet != null) {
                    System.out.println("the hollow fleet's collections in the steady phase: "
                            + fleetGc().since(fleetGc0));
                }
                List<Long> allAgents = new ArrayList<>();
                List<Long> real = new ArrayList<>();
                List<Long> stored = new ArrayList<>();
                List<Long> fanOut = new ArrayList<>();
                // Each agent's own latency too, every (agent, change) pair: whether a few agents or all of them are
                // slow.
                List<Long> each = new ArrayList<>();
                Map<String, Integer> slow = new java.util.TreeMap<>();
                List<Long> slowNodes = new ArrayList<>();
                // With a replica killed: the changes sent from a second before it until its nodes had all moved are the
                // failover's, reported on their own line; the rest are the steady state's.
                List<Long> failover = new ArrayList<>();
                long moveEnd = killedAt == 0 ? 0 : killedAt + moved[0];
                for (Change ch : recorded) {
                    boolean duringFailover =
                            killedAt != 0 && ch.sent() >= killedAt - 1_000_000_000L && ch.sent() <= moveEnd;
                    long worst = 0;
                    for (String k : ch.cluster().simulated()) {
                        long l = reached(k, ch.version()) - ch.sent();
                        if (k.equals(slowNode)) {
                            slowNodes.add(l); // its own line: the question is whether it moves the others'
                            continue;
                        }
                        each.add(l);
                        if (l > 5_000_000_000L) {
                            slow.merge(k, 1, Integer::sum);
                        }
                        worst = Math.max(worst, l);
                    }
                    stored.add(ch.storedAfter());
                    if (worst > 0 && duringFailover) {
                        failover.add(worst);
                    } else if (worst > 0) {
                        allAgents.add(worst);
                        fanOut.add(worst - ch.storedAfter());
                    }
                    if (kernel && ch.cluster() == first) {
                        real.add(reached(realKey, ch.version()) - ch.sent());
                    }
                }
                System.out.printf("change → version stored (compiler): %s%n", summary(stored));
                if (!timeline.isEmpty() && !allAgents.isEmpty()) {
                    // The slowest change: frames written, acks received and acks stored every 50 ms from when it was
                    // sent.
                    int worst = 0;
                    for (int i = 0; i < allAgents.size(); i++) {
                        if (allAgents.get(i) > allAgents.get(worst)) {
                            worst = i;
                        }
                    }
                    long sentAt = recorded.get(worst).sent();
                    StringBuilder line = new StringBuilder(
                            "slowest change (" + worst + "), every 50 ms from its send: frames/acks in/acks stored:");
                    long[] prev = null;
                    for (long[] t : new ArrayList<>(timeline)) {
                        if (t[0] < sentAt - 100_000_000L || t[0] > sentAt + allAgents.get(worst) + 200_000_000L) {
                            continue;
                        }
                        if (prev != null) {
                            line.append(' ')
                                    .append(t[1] - prev[1])
                                    .append('/')
                                    .append(t[2] - prev[2])
                                    .append('/')
                                    .append(t[3] - prev[3]);
                        }
                        prev = t;
                    }
                    System.out.println(line);
                }
                if (simulated > 0) {
                    System.out.printf(
                            "change → acked, each agent on its own: %s; agents ever over 5 s: %d (most often: %s)%n",
                            summary(each),
                            slow.size(),
                            slow.entrySet().stream()
                                    .sorted(Map.Entry.<String, Integer>comparingByValue()
                                            .reversed())
                                    .limit(5)
                                    .map(e -> e.getKey() + " ×" + e.getValue())
                                    .toList());
                    String all = (shape.size() == 1 ? "all " + simulated + " agents" : "all agents of its cluster")
                            + (slowNode == null ? "" : " but the slow one");
                    System.out.printf(
                            "version stored → acked by %s (the fan-out, %s): %s%n",
                            all, transport.id(), summary(fanOut));
                    System.out.printf(
                            "change → acked by %s (%d dry-run, %d hollow in %d cluster%s), %d changes at %d/s: %s%n",
                            all,
                            dryRunAgents,
                            hollowAgents,
                            shape.size(),
                            shape.size() == 1 ? "" : "s",
                            recorded.size(),
                            rate,
                            summary(allAgents));
                    // In the order sent: whether the slow ones are scattered or one stall that every agent waited out.
                    System.out.println("  each change in turn (s): "
                            + allAgents.stream()
                                    .map(l -> String.format("%.1f", l / 1e9))
                                    .collect(java.util.stream.Collectors.joining(" ")));
                }
                if (!slowNodes.isEmpty()) {
                    System.out.printf(
                            "change → acked by the slow agent %s (acks 5 s late, reads a frame a second): %s%n",
                            slowNode, summary(slowNodes));
                }
                if (kernel) {
                    System.out.printf(
                            "change → acked by the real-kernel agent (%d Services in its netns): %s%n",
                            services, summary(real));
                    List<Long> d = applyMillis.getOrDefault(realKey, List.of());
                    System.out.printf(
                            "real-kernel agent: %d applies for %d changes; apply duration (from its acks): %s%n",
                            d.size(), real.size(), summary(d));
                }
                if (dryRunAgents > 0) {
                    List<Long> d = applyMillis.getOrDefault(key(first.name(), "node-0"), List.of());
                    System.out.printf("dry-run agent node-0: %d applies; apply duration: %s%n", d.size(), summary(d));
                }
                // The figures a run is for, last.
                if (!failover.isEmpty()) {
                    long[] f = failover.stream()
                            .mapToLong(Long::longValue)
                            .sorted()
                            .toArray();
                    System.out.printf(
                            "RESULT change → acked by all its agents while a killed replica's nodes moved (%d changes): max %.0f ms%n",
                            f.length, f[f.length - 1] / 1e6);
                }
                if (simulated > 0) {
                    long[] sorted = allAgents.stream()
                            .mapToLong(Long::longValue)
                            .sorted()
                            .toArray();
                    System.out.printf(
                            "RESULT change → acked by %s: p99 %.0f ms, max %.0f ms (%d changes at %d/s%s)%n",
                            shape.size() == 1 ? "all its agents" : "all agents of its cluster",
                            pct(sorted, 99),
                            sorted[sorted.length - 1] / 1e6,
                            sorted.length,
                            rate,
                            failover.isEmpty() ? "" : ", outside the failover");
                    double jit = threads1.entrySet().stream()
                                    .filter(e -> e.getKey().contains("CompilerThre"))
                                    .mapToLong(e -> e.getValue() - threads0.getOrDefault(e.getKey(), 0L))
                                    .sum()
                            / 1e3
                            / agentVersions;
                    System.out.printf(
                            "RESULT CPU per agent and version: control plane (broker, compiler, api, PostgreSQL) %.0f µs, of "
                                    + "which %.0f µs the JIT still compiling; %s hollow agents %.0f µs%n",
                            (control + pg) * 1e3 / agentVersions,
                            jit,
                            thin ? "thin" : "full",
                            fleetMs * 1e3 / agentVersions);
                }
            }
        } finally {
            statusReaderStopping = true;
            for (int i = close.size() - 1; i >= 0; i--) {
                try {
                    close.get(i).close();
                } catch (Exception e) {
                    System.out.println("while stopping: " + e);
                }
            }
            kafka.destroy();
            if (kernel) {
                run("ip", "netns", "del", ns);
            }
            try (java.util.stream.Stream<Path> files = Files.walk(state)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(f -> f.toFile().delete());
            }
            PipelineBenchmark.admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }

    /** One recorded change: its cluster, the version that covers it, when it was sent (nanoTime), and how long until stored. */
    private record Change(Cluster cluster, long version, long sent, long storedAfter) {}

    /**
     * The embedded broker's own counters, read from its JMX beans (the broker runs in this process): open connections, and
     * fetch requests served, whoever sent them (the compiler, the api's relay, agents reading the deltas topic).
     */
    record Broker(double connections, double fetches) {
        static Broker read() {
            javax.management.MBeanServer beans = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            return new Broker(
                    sum(
                            beans,
                            "kafka.server:type=socket-server-metrics,listener=*,networkProcessor=*",
                            "connection-count"),
                    sum(beans, "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Fetch*,*", "Count"));
        }

        private static double sum(javax.management.MBeanServer beans, String pattern, String attribute) {
            try {
                double total = 0;
                for (javax.management.ObjectName n : beans.queryNames(new javax.management.ObjectName(pattern), null)) {
                    total += ((Number) beans.getAttribute(n, attribute)).doubleValue();
                }
                return total;
            } catch (javax.management.JMException e) {
                throw new IllegalStateException("reading the broker's " + attribute + ": " + e.getMessage(), e);
            }
        }

        /** Connections now, and fetch requests a second since {@code before}. */
        String since(Broker before, double seconds) {
            return String.format(
                    "%.0f connections, %.0f fetch requests a second",
                    connections, (fetches - before.fetches) / seconds);
        }
    }

    /**
     * PostgreSQL's own counters for the benchmark's database: rows of node_status written (inserted or updated: the acks
     * it took), and transactions committed by everyone but this benchmark's node_status reader.
     */
    private record Postgres(long nodeStatusRows, long hotUpdates, long updates, long commits) {
        String since(Postgres before, double seconds) {
            long upd = updates - before.updates;
            return String.format(
                    "node_status %.0f rows written a second (%.0f %% of updates HOT); %.0f commits a second in the database"
                            + " (all writers)",
                    (nodeStatusRows - before.nodeStatusRows) / seconds,
                    upd == 0 ? 0.0 : 100.0 * (hotUpdates - before.hotUpdates) / upd,
                    (commits - before.commits) / seconds);
        }
    }

    private Postgres postgres(String url) throws java.sql.SQLException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "postgres", "");
                java.sql.ResultSet rs = c.createStatement()
                        .executeQuery(
                                "SELECT (SELECT xact_commit FROM pg_stat_database WHERE "
                                        + "datname = current_database()), coalesce(sum(n_tup_ins + n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0), "
                                        + "coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname = 'node_status'")) {
            rs.next();
            return new Postgres(rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(1) - readerQueries.get());
        }
    }

    static boolean kernelAvailable() {
        return ProcessHandle.current().info().user().orElse("").equals("root")
                && Files.exists(Path.of("/usr/sbin/iptables-restore"));
    }

    static String key(String cluster, String node) {
        return cluster + "/" + node;
    }

    private static String clusterOf(String key) {
        return key.substring(0, key.indexOf('/'));
    }

    /** Every node's own token (only it may ack for it), made from one secret the fleet's process is given. */
    private static final AgentTokens AGENTS = AgentTokens.random();

    private List<String> tokenLines = List.of();

    /** The api's token lines: one per node of every cluster, the real node's too. */
    private static List<String> tokenLines(List<Cluster> shape) {
        List<String> lines = new ArrayList<>();
        for (Cluster c : shape) {
            for (int n = 0; n <= c.dryRun() + c.hollow(); n++) {
                lines.add(AGENTS.line(c.name(), "node-" + n));
            }
        }
        return lines;
    }

    private AgentLoop agent(String bootstrap, URI api, String cluster, String node, Netfilter nf, Path state)
            throws InterruptedException {
        return agent(
                bootstrap,
                api,
                cluster,
                node,
                new IptablesMode(
                        node,
                        new Applier(List.of(nf), null, Clock.systemUTC()),
                        new Conntrack(HostCommand.PROCESSES, true),
                        Duration.ofSeconds(30),
                        200),
                state);
    }

    private AgentLoop agent(String bootstrap, URI api, String cluster, String node, KernelMode mode, Path state)
            throws InterruptedException {
        ApiClient connection = clients.next(api, AGENTS.token(cluster, node));
        // Acks are timed from node_status; the observer only collects how long each apply took.
        return config(bootstrap, api, cluster, AGENTS.token(cluster, node), node, state, transport, streams)
                .loop(connection, new ApiSnapshots(connection), mode, this::record)
                .start();
    }

    /**
     * One simulated node's configuration (its kernel is given by the caller), reaching the control plane by {@code via}
     * ({@code streams}: the api's stream address, for the stream transport).
     */
    static AgentConfig config(
            String bootstrap,
            URI api,
            String cluster,
            String token,
            String node,
            Path state,
            Transport via,
            String streams) {
        AgentConfig c = new AgentConfig(
                cluster,
                node,
                bootstrap,
                Map.of(),
                Topics.DEFAULT,
                api,
                token,
                List.of(IpFamily.IPV4),
                null,
                null,
                state,
                Duration.ofSeconds(30),
                200);
        return via == Transport.STREAM ? c.withStream(streams) : c.withTransport(via);
    }

    /**
     * The hollow agents in a child process under {@code nice -n 19} ({@link HollowFleet}); their acks are timed where
     * PostgreSQL records them, and its output is shown but for INFO lines. Closing the returned handle ends it.
     */
    private AutoCloseable hollowFleet(URI api, List<Cluster> shape, String bootstrap) throws Exception {
        // Hundreds of agents inflating their gzip snapshots at once hold JDK 17's GC locker (the Inflater pins its
        // arrays)
        // so often that G1 gives up after two retries and throws OutOfMemoryError with the heap mostly free: one agent
        // per JVM never meets this, a fleet in one JVM does. Later JDKs have no GC locker in G1 (JDK-8308507).
        // Full hollow agents do a node's work (parsing and checking every delta) and are niced, or they starve the
        // control
        // plane's single-threaded parts. Thin ones do what a node costs the control plane and no more, and run at the
        // control plane's priority: niced, every burst of the control plane (a compilation by the JIT, a fan-out)
        // stopped
        // them for as long, which measured the scheduler rather than the control plane.
        List<String> cmd = new ArrayList<>(List.of(
                "nice",
                "-n",
                thin ? "0" : "19",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx12g",
                "-XX:+UnlockDiagnosticVMOptions",
                "-XX:GCLockerRetryAllocationCount=1000",
                // The JDK's HTTP client completes every sendAsync on CompletableFuture's default pool, which on two
                // cores
                // (common pool parallelism 1) is a new thread per task: a thread started per ack and per watch answer,
                // a
                // trifle for one agent, 100 a second for a fleet of 1,000 in one JVM (a JFR of the 1,000-agent run).
                "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2"));
        // FLEET_JAVA_OPTS: more options for the fleet's JVM (say, -XX:+UseStringDeduplication), split on spaces.
        String extra = System.getenv().getOrDefault("FLEET_JAVA_OPTS", "").strip();
        if (!extra.isEmpty()) {
            cmd.addAll(List.of(extra.split("\\s+")));
            System.out.println("the hollow fleet's JVM also gets: " + extra);
        }
        if (thin) {
            cmd.addAll(List.of(
                    "-cp",
                    System.getProperty("java.class.path"),
                    ThinFleet.class.getName(),
                    api.toString(),
                    streams,
                    AGENTS.secret(),
                    slowNode == null ? "none" : slowNode));
        } else {
            cmd.addAll(List.of(
                    "-cp",
                    System.getProperty("java.class.path"),
                    HollowFleet.class.getName(),
                    api.toString(),
                    AGENTS.secret(),
                    transport.id(),
                    bootstrap,
                    streams));
        }
        int count = 0;
        for (Cluster c : shape) {
            if (c.hollow() > 0) {
                cmd.add(c.name() + ":" + c.dryRun() + ":" + c.hollow());
                count += c.hollow();
            }
        }
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        fleet = p;
        // A fleet that ends on its own lost agents (it says which): the waits for all agents would never end.
        p.onExit().thenAccept(ended -> {
            if (ended.exitValue() != 0 && !fleetClosing) {
                System.out.println("the hollow fleet ended with status " + ended.exitValue() + "; stopping");
                System.exit(1);
            }
        });
        java.io.BufferedReader lines = new java.io.BufferedReader(
                new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
        Thread reader = new Thread(
                () -> {
                    try {
                        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                            if (line.startsWith("warmed ")) {
                                fleetWarm.complete(System.nanoTime());
                            }
                            if (!line.contains(" INFO ")) {
                                System.out.println("hollow fleet: " + line);
                            }
                        }
                    } catch (java.io.IOException e) {
                        System.out.println("hollow fleet: " + e);
                    }
                },
                "hollow-fleet-output");
        reader.setDaemon(true);
        reader.start();
        System.out.printf(
                "%d %s hollow agents in a child process (nice %d, pid %d)%n",
                count, thin ? "thin" : "full", thin ? 0 : 19, p.pid());
        return () -> {
            fleetClosing = true;
            p.getOutputStream().close();
            if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        };
    }

    /**
     * The hollow fleet's heap after a full collection, per agent: what each agent's state (the rules of its version, its
     * feed) holds. The JVM's own share is counted in, so it overstates a little per agent.
     */
    private String fleetHeap(int agents) {
        try {
            String jcmd =
                    Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
            new ProcessBuilder(jcmd, Long.toString(fleet.pid()), "GC.run")
                    .redirectErrorStream(true)
                    .start()
                    .waitFor();
            Process info = new ProcessBuilder(jcmd, Long.toString(fleet.pid()), "GC.heap_info")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(info.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("used (\\d+)K").matcher(out);
            if (!m.find()) {
                return "heap not read: " + out.strip();
            }
            long usedKb = Long.parseLong(m.group(1));
            return String.format(
                    "the hollow fleet's heap after a full GC %.0f MB, %.1f MB per agent",
                    usedKb / 1024.0, usedKb / 1024.0 / agents);
        } catch (java.io.IOException e) {
            return "heap not read: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "heap not read: interrupted";
        }
    }

    /** The fleet JVM's garbage collections so far: young and full ones and the seconds they took (stop-the-world). */
    private record Gc(long young, long full, double seconds) {
        static final Gc NONE = new Gc(0, 0, 0);

        String since(Gc before) {
            return String.format(
                    "%d young, %d full, %.1f s paused",
                    young - before.young, full - before.full, seconds - before.seconds);
        }
    }

    /** Read with {@code jstat -gc} (YGC, FGC, GCT): a fleet that spends its time collecting measures its heap, not the control plane. */
    private Gc fleetGc() {
        if (fleet == null) {
            return Gc.NONE;
        }
        try {
            Process p = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "jstat")
                                    .toString(),
                            "-gc",
                            Long.toString(fleet.pid()))
                    .redirectErrorStream(true)
                    .start();
            List<String> lines = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .strip()
                    .lines()
                    .toList();
            List<String> names = List.of(lines.get(0).strip().split("\\s+"));
            String[] values = lines.get(lines.size() - 1).strip().split("\\s+");
            return new Gc(
                    Long.parseLong(values[names.indexOf("YGC")]),
                    Long.parseLong(values[names.indexOf("FGC")]),
                    Double.parseDouble(values[names.indexOf("GCT")]));
        } catch (java.io.IOException | RuntimeException e) {
            System.out.println("the hollow fleet's collections not read: " + e);
            return Gc.NONE;
        }
    }

    /**
     * Sends {@code count} endpoint changes at {@code rate} a second, paced, each to the next cluster in turn; returns
     * them once their versions are stored.
     */
    private List<Change> changes(
            KafkaProducer<String, String> producer,
            List<Cluster> shape,
            int services,
            int endpoints,
            int rate,
            int count,
            int generation)
            throws Exception {
        List<Map.Entry<Cluster, Long>> sent = new ArrayList<>();
        long intervalNanos = 1_000_000_000L / rate;
        long start = System.nanoTime();
        for (int k = 0; k < count; k++) {
            long wait = start + k * intervalNanos - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
            Cluster c = shape.get(k % shape.size());
            int svc = (k / shape.size() * 7919) % services;
            long offset = send(
                    producer,
                    c,
                    List.of(up(c.name(), PipelineBenchmark.slice(svc, endpoints, c.nodes(), generation + k))));
            sent.add(Map.entry(c, offset));
        }
        List<Change> changes = new ArrayList<>();
        for (Map.Entry<Cluster, Long> e : sent) {
            EventClock clock = e.getKey().clock();
            clock.awaitStored(e.getValue());
            changes.add(new Change(
                    e.getKey(),
                    clock.versionOf(e.getValue()),
                    clock.sentAt(e.getValue()),
                    clock.storedAfter(e.getValue())));
        }
        return changes;
    }

    /** Waits until every agent of each change's cluster (the real-kernel one too) runs its version or a later one. */
    private void awaitAll(List<Change> changes) {
        Map<Cluster, Long> newest = new HashMap<>();
        changes.forEach(ch -> newest.merge(ch.cluster(), ch.version(), Math::max));
        Map<String, Long> last = new HashMap<>();
        newest.forEach((c, v) -> c.agents().forEach(k -> last.put(k, v)));
        await("every agent at the version of its cluster's last change")
                .forever()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .until(() ->
                        last.entrySet().stream().allMatch(e -> acked.getOrDefault(e.getKey(), 0L) >= e.getValue()));
    }

    private static double snapshotBytes(MeterRegistry meters) {
        return meters.get("rulesync.snapshot.bytes")
                .tag("encoding", "gzip")
                .summary()
                .totalAmount();
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private long fleetCpuNanos() {
        return fleet == null
                ? 0
                : fleet.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /** The server process serving the node_status reader: its CPU is the benchmark's, not the control plane's. */
    private volatile long readerBackend = -1;

    /**
     * CPU of every postgres process on this machine (the benchmark's database is the only busy one), but for the backend
     * of the benchmark's own node_status reader.
     */
    private long postgresCpuNanos() {
        // Per process, the most seen: a backend that ended (a killed replica's connections) keeps what it used.
        ProcessHandle.allProcesses()
                .filter(ph -> ph.pid() != readerBackend)
                .filter(ph ->
                        ph.info().command().map(c -> c.contains("postgres")).orElse(false))
                .forEach(ph -> postgresSeen.merge(
                        ph.pid(),
                        ph.info().totalCpuDuration().map(Duration::toNanos).orElse(0L),
                        Math::max));
        return postgresSeen.values().stream().mapToLong(Long::longValue).sum();
    }

    private final Map<Long, Long> postgresSeen = new ConcurrentHashMap<>();

    /** When the agent ("cluster/node") first acked version v or later. */
    private long reached(String key, long v) {
        long best = Long.MAX_VALUE;
        for (Map.Entry<Long, Long> e : ackedAt.getOrDefault(key, Map.of()).entrySet()) {
            if (e.getKey() >= v) {
                best = Math.min(best, e.getValue());
            }
        }
        return best;
    }

    /** An ack as its agent sent it: how long its apply took (when it was stored is read from node_status). */
    private void record(NodeAck a) {
        if (a.status() == NodeAck.Status.APPLIED && recording) {
            applyMillis
                    .computeIfAbsent(
                            key(a.cluster(), a.node()), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                    .add(a.durationMs() * 1_000_000);
        }
    }

    /** The agent ("cluster/node") was first recorded running {@code version} at {@code now} (nanoTime). */
    private void applied(String key, long version, long now) {
        acked.merge(key, version, Math::max);
        ackedAt.computeIfAbsent(key, k -> new ConcurrentHashMap<>()).putIfAbsent(version, now);
    }

    /** The node_status reader's queries, each a transaction of its own: left out of the database's commits. */
    private final java.util.concurrent.atomic.AtomicLong readerQueries = new java.util.concurrent.atomic.AtomicLong();

    /** The node_status reader's thread: its CPU is the benchmark's, not the control plane's, and is left out. */
    private volatile Thread statusReader;

    private volatile boolean statusReaderStopping;

    private void watchNodeStatus(String url) {
        statusReader = Thread.currentThread();
        // Only the rows written since the last read (with a second's overlap for transactions that committed late): a
        // thousand rows read every 20 ms cost PostgreSQL more than the acks it measures.
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "postgres", "");
                java.sql.PreparedStatement q = c.prepareStatement(
                        "SELECT cluster, node, running, updated_at FROM node_status " + "WHERE updated_at > ?")) {
            try (java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                readerBackend = rs.getLong(1);
            }
            java.sql.Timestamp since = new java.sql.Timestamp(0);
            while (!statusReaderStopping) {
                long now = System.nanoTime();
                q.setTimestamp(1, since);
                try (java.sql.ResultSet rs = q.executeQuery()) {
                    readerQueries.incrementAndGet();
                    java.sql.Timestamp newest = since;
                    while (rs.next()) {
                        String k = key(rs.getString(1), rs.getString(2));
                        if (rs.getLong(3) > acked.getOrDefault(k, 0L)) {
                            applied(k, rs.getLong(3), now);
                        }
                        java.sql.Timestamp t = rs.getTimestamp(4);
                        if (t.after(newest)) {
                            newest = t;
                        }
                    }
                    since = new java.sql.Timestamp(newest.getTime() - 1000);
                }
                Thread.sleep(20);
            }
        } catch (Exception e) {
            if (!statusReaderStopping) {
                System.out.println("reading node_status: " + e);
            }
        }
    }

    /**
     * CPU so far of this process's threads, by name with numbers left out (a pool's threads together), read from
     * {@code /proc/self/task}: the JVM's own threads (collectors, JIT compilers) too, by their 15-character names. Threads
     * that ended meanwhile are missed (pools keep theirs); the benchmark's own (main, the node_status reader, the sampler)
     * and the simulated nodes' ({@code agent-*}, the process reaper) are listed as they are, apart from the rest.
     */
    private static Map<String, Long> cpuByThreadGroup() {
        return cpuByThreadGroup("self");
    }

    /** {@link #cpuByThreadGroup()} of process {@code pid} ("self": this one). */
    private static Map<String, Long> cpuByThreadGroup(String pid) {
        Map<String, Long> out = new HashMap<>();
        long tick = 10_000_000L; // USER_HZ is 100 on Linux: a clock tick is 10 ms
        try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc", pid, "task"))) {
            for (Path t : tasks.toList()) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long cpu = (Long.parseLong(f[11]) + Long.parseLong(f[12])) * tick;
                    out.merge(name.replaceAll("\\d+", "#"), cpu, Long::sum);
                } catch (java.io.IOException | RuntimeException gone) {
                    // the thread ended while it was read
                }
            }
        } catch (java.io.IOException e) {
            return out;
        }
        return out;
    }

    /**
     * What the control plane costs while nothing changes, every stream open: its timers, polls and keep-alives. Paid per
     * second whatever the rate, so at the steady phase's rate it is part of each agent-version's figure; said apart here.
     */
    private void idle() throws InterruptedException {
        long cpu0 = controlCpuNanos();
        long pg0 = postgresCpuNanos();
        Map<String, Long> threads0 = cpuByThreadGroup();
        long t0 = System.nanoTime();
        Thread.sleep(10_000);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double control = (controlCpuNanos() - cpu0) / 1e6 / seconds;
        double pg = (postgresCpuNanos() - pg0) / 1e6 / seconds;
        System.out.printf(
                "idle for %.0f s, every stream open: control plane %.1f ms of CPU a second, PostgreSQL %.1f ms a second; by thread: %s%n",
                seconds,
                control,
                pg,
                busiest(
                        threads0,
                        cpuByThreadGroup(),
                        10,
                        // /proc gives names cut to 15 characters
                        name -> BENCH_THREADS.stream().noneMatch(b -> b.startsWith(name)) && !name.startsWith("agent-"),
                        1e6 * seconds,
                        "ms/s"));
    }

    /**
     * The {@code limit} thread groups of {@code shown} names that used the most CPU between two {@link #cpuByThreadGroup}
     * readings, most first, each as its name and its CPU divided by {@code nanosPerUnit}, in {@code unit}.
     */
    private static String busiest(
            Map<String, Long> before,
            Map<String, Long> after,
            int limit,
            java.util.function.Predicate<String> shown,
            double nanosPerUnit,
            String unit) {
        return after.entrySet().stream()
                .filter(e -> shown.test(e.getKey()))
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> e.getValue() > 0)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(limit)
                .map(e -> String.format("%s %.1f %s", e.getKey(), e.getValue() / nanosPerUnit, unit))
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /** CPU so far of the JIT compiler threads, in this process and the fleet's. */
    private long jitNanos() {
        long sum = 0;
        for (String pid : fleet == null ? List.of("self") : List.of("self", Long.toString(fleet.pid()))) {
            sum += cpuByThreadGroup(pid).entrySet().stream()
                    .filter(e -> e.getKey().contains("CompilerThre"))
                    .mapToLong(Map.Entry::getValue)
                    .sum();
        }
        return sum;
    }

    private volatile long replicaCpu0;
    /** When the second replica was killed (nanoTime), and how long its nodes took to move; 0 when it was not. */
    private volatile long killedAt;

    private volatile long replicaCpuAtKill;

    /** Starts the second replica on the benchmark's database; returns its stream port, read from its log. */
    private int startReplica(String db) throws Exception {
        Path tokens = Files.createTempFile("rulesync-bench-tokens", ".txt");
        Files.write(tokens, tokenLines);
        tokens.toFile().deleteOnExit();
        List<String> cmd = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx4g",
                "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2",
                "-cp",
                System.getProperty("java.class.path"),
                ApiReplica.class.getName(),
                "--port=0",
                "--stream-port=0",
                "--address=127.0.0.1",
                "--tokens-file=" + tokens,
                "--db-url=jdbc:postgresql://127.0.0.1:5432/" + db);
        replica = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        java.io.BufferedReader lines = new java.io.BufferedReader(
                new java.io.InputStreamReader(replica.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
        java.util.regex.Pattern port = java.util.regex.Pattern.compile("node streams on port (\\d+)");
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            java.util.regex.Matcher m = port.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(
                        () -> {
                            try {
                                while (lines.readLine() != null) {
                                    // its log is not shown
                                }
                            } catch (java.io.IOException ignored) {
                                // killed
                            }
                        },
                        "replica-output");
                drain.setDaemon(true);
                drain.start();
                return Integer.parseInt(m.group(1));
            }
        }
        throw new IllegalStateException("the second replica ended before it served");
    }

    /** The benchmark's own threads in this process: their CPU is not the control plane's. */
    private static final java.util.Set<String> BENCH_THREADS =
            java.util.Set.of("main", "node-status-reader", "timeline-sampler", "replica-killer", "replica-output");

    /** This JVM's heap in use after a full collection, in bytes. */
    private static long heapAfterGc() {
        System.gc();
        return java.lang.management.ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage()
                .getUsed();
    }

    /** This JVM's collections so far: their count and milliseconds, all collectors together. */
    private static long[] gcTotals() {
        long count = 0;
        long ms = 0;
        for (java.lang.management.GarbageCollectorMXBean g :
                java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, g.getCollectionCount());
            ms += Math.max(0, g.getCollectionTime());
        }
        return new long[] {count, ms};
    }

    private static String gcSince(long[] before) {
        long[] now = gcTotals();
        return String.format("%d, %d ms", now[0] - before[0], now[1] - before[1]);
    }

    /**
     * The control plane's CPU in this process: all of it but the node_status reader's, and the simulated nodes' own that
     * run here (the dry-run and real-kernel agents' loops, and the JDK's reaper of the real-kernel agent's tools; the
     * short-lived threads that read those tools' output stay in, so the figure is a little high).
     */
    private long controlCpuNanos() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (java.lang.management.ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t != null
                    && (BENCH_THREADS.contains(t.getThreadName())
                            || t.getThreadName().startsWith("agent-")
                            || t.getThreadName().equals("process reaper"))) {
                benchThreadsSeen.merge(t.getThreadId(), Math.max(0, mx.getThreadCpuTime(t.getThreadId())), Math::max);
            }
        }
        // Per thread, the most seen: a thread that ended (a process reaper idle for a minute) still took what it took.
        // Summing
        // only the living ones gave the control plane, at the end of a phase, all a dead reaper had used since the
        // start.
        return processCpuNanos()
                - benchThreadsSeen.values().stream().mapToLong(Long::longValue).sum();
    }

    private final Map<Long, Long> benchThreadsSeen = new ConcurrentHashMap<>();

    private long send(KafkaProducer<String, String> producer, Cluster c, List<String> values) throws Exception {
        return c.clock().send(producer, topics.events(), c.name(), values);
    }

    private static String up(String cluster, io.rulesync.model.cluster.ClusterObject o) {
        return EventCodec.encode(new ClusterEvent.ObjectUpserted(cluster, o, "1", Instant.now()));
    }

    private static String summary(List<Long> nanos) {
        long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format(
                "p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms",
                pct(s, 50), pct(s, 90), pct(s, 99), s[s.length - 1] / 1e6);
    }

    private static double pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    private static int arg(String[] args, int i, int def) {
        return args.length > i ? Integer.parseInt(args[i]) : def;
    }

    private static void run(String... cmd) {
        try {
            new ProcessBuilder(cmd).inheritIO().start().waitFor();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
