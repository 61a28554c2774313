package io.rulesync.e2e.bench;

import static org.awaitility.Awaitility.await;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.exec.HostCommand;
import io.rulesync.agent.feed.ApiConnection;
import io.rulesync.agent.feed.ApiSnapshots;
import io.rulesync.agent.feed.Transport;
import io.rulesync.agent.mode.HollowMode;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.rules.RuleGrammar;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.compiler.bench.EventClock;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
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
 * watcher puts it) → compiler → PostgreSQL → outbox → deltas topic → agents apply → acks topic.
 * Measured per event: from sending it to the arrival of the acks of every dry-run agent, and of the
 * real-kernel agent (iptables-restore into a network namespace), for the version that covers it.
 * Real KRaft broker, PostgreSQL, compiler and api; SERVICES x ENDPOINTS, DRY_RUN_AGENTS + 1 nodes, the
 * cluster of {@link PipelineBenchmark} (every 10th Service a NodePort with externalTrafficPolicy Local).
 *
 * <p>HOLLOW_AGENTS more agents run with {@link HollowMode} (issue 16): the agent's real feed, snapshots, validation,
 * sequencing and acks, no kernel, so that many of them measure the control plane and the fan-out rather than this
 * machine's cores applying rules. They run in a child process under {@code nice -n 19} ({@link HollowFleet}): in
 * this process their work (every delta parsed and checked by every agent) starved the control plane's
 * single-threaded parts. The "all agents" figure covers the dry-run and the hollow ones.
 *
 * <p>TRANSPORT says how agents get deltas and send acks: {@code api} (a watch and POSTs to the api) or {@code kafka}
 * (the deltas and acks topics). Either way an ack counts when PostgreSQL records it in {@code node_status} (read every
 * 20 ms), what {@code GET /nodes} shows.
 *
 * <p>{@code bench/propagation [SERVICES ENDPOINTS DRY_RUN_AGENTS RATE SECONDS REAL_AGENT(0|1) HOLLOW_AGENTS TRANSPORT]}; needs
 * PostgreSQL on 127.0.0.1:5432, and root with iptables for the real-kernel agent (skipped otherwise).
 */
public final class PropagationBenchmark {
    private static final String CLUSTER = "bench";
    private final Topics topics = Topics.DEFAULT;
    private final EventClock clock = new EventClock();
    /** node → highest version acked (APPLIED) and when (nanoTime) each version was first reached. */
    private final Map<String, Long> acked = new ConcurrentHashMap<>();
    private final Map<String, Map<Long, Long>> ackedAt = new ConcurrentHashMap<>();
    /** node → durations (ms) of its APPLIED acks while recording. */
    private final Map<String, List<Long>> applyMillis = new ConcurrentHashMap<>();
    private volatile boolean recording;
    private Transport transport = Transport.API;
    private final AgentClients clients = new AgentClients();
    /** The hollow agents' process, if any: its CPU time is reported apart. */
    private Process fleet;
    private volatile boolean fleetClosing;
    /** When the hollow fleet's JVM was warm and started its agents, all at once (nanoTime). */
    private final java.util.concurrent.CompletableFuture<Long> fleetWarm = new java.util.concurrent.CompletableFuture<>();

    public static void main(String[] args) throws Exception {
        int services = arg(args, 0, 10_000);
        int endpoints = arg(args, 1, 10);
        int dryRun = arg(args, 2, 20);
        int rate = arg(args, 3, 10);
        int seconds = arg(args, 4, 30);
        boolean realAgent = arg(args, 5, 1) == 1;
        int hollow = arg(args, 6, 0);
        PropagationBenchmark bench = new PropagationBenchmark();
        bench.transport = args.length > 7 ? Transport.parse(args[7]) : Transport.API;
        bench.run(services, endpoints, dryRun, hollow, rate, seconds, realAgent);
        System.exit(0);
    }

    private void run(int services, int endpoints, int dryRunAgents, int hollowAgents, int rate, int seconds, boolean realAgent)
            throws Exception {
        int simulated = dryRunAgents + hollowAgents;
        int nodes = simulated + 1;
        String realNode = "node-" + simulated;
        boolean kernel = realAgent && ProcessHandle.current().info().user().orElse("").equals("root")
                && Files.exists(Path.of("/usr/sbin/iptables-restore"));
        String db = "rulesync_bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        PipelineBenchmark.admin("CREATE DATABASE " + db);
        String ns = "rs-prop-bench-" + ProcessHandle.current().pid();
        EmbeddedKafkaKraftBroker kafka = new EmbeddedKafkaKraftBroker(1, 6, topics.events(), topics.deltas(), topics.acks());
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
            PartitionProcessor.VersionListener listener = clock;
            ConfigurableApplicationContext compiler = new SpringApplicationBuilder(CompilerApplication.class)
                    .web(WebApplicationType.NONE).properties(props)
                    .initializers(ctx -> ((org.springframework.context.support.GenericApplicationContext) ctx)
                            .registerBean(PartitionProcessor.VersionListener.class, () -> listener))
                    .run();
            close.add(compiler::close);
            ApiCommand apiCommand = new ApiCommand().withTokens(List.of(AGENT_TOKEN.line()));
            new CommandLine(apiCommand).parseArgs("--port=0", "--db-url=jdbc:postgresql://127.0.0.1:5432/" + db);
            ConfigurableApplicationContext api = apiCommand.start();
            close.add(api::close);
            URI apiUrl = URI.create("http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port"));

            // When a node acked a version is when PostgreSQL records it (node_status), what GET /nodes shows: the same point
            // for both transports, read every 20 ms.
            Thread status = new Thread(() -> watchNodeStatus("jdbc:postgresql://127.0.0.1:5432/" + db), "node-status-reader");
            status.setDaemon(true);
            status.start();
            System.out.printf("agents' transport: %s%n", transport.id());

            try (KafkaProducer<String, String> producer = PipelineBenchmark.producer(bootstrap)) {
                List<String> load = new ArrayList<>();
                load.add(EventCodec.encode(new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Instant.now())));
                for (int n = 0; n < nodes; n++) {
                    load.add(up(PipelineBenchmark.node(n)));
                }
                for (int i = 0; i < services; i++) {
                    load.add(up(PipelineBenchmark.service(i)));
                    load.add(up(PipelineBenchmark.slice(i, endpoints, nodes, 0)));
                }
                long t0 = System.nanoTime();
                clock.awaitStored(send(producer, load));
                System.out.printf("initial load: %d events stored in %.1f s%n", load.size(), (System.nanoTime() - t0) / 1e9);

                List<String> agentNodes = new ArrayList<>();
                for (int n = 0; n < dryRunAgents; n++) {
                    String node = "node-" + n;
                    agentNodes.add(node);
                    close.add(agent(bootstrap, apiUrl, node, new MemoryNetfilter(IpFamily.IPV4, null, node), state));
                }
                for (int n = dryRunAgents; n < simulated; n++) {
                    agentNodes.add("node-" + n);
                }
                if (hollowAgents > 0) {
                    close.add(hollowFleet(apiUrl, dryRunAgents, hollowAgents, bootstrap));
                }
                if (kernel) {
                    run("ip", "netns", "add", ns);
                    agentNodes.add(realNode);
                    close.add(agent(bootstrap, apiUrl, realNode, new IptablesNetfilter(IpFamily.IPV4, HostCommand.PROCESSES.inNetns(ns),
                            (family, table, chain, rule) -> RuleGrammar.parse(table, family, chain, rule).kernelForm()), state));
                } else {
                    System.out.println("no real-kernel agent" + (realAgent ? ": needs root and iptables-restore" : ""));
                }
                long head = clock.head();
                t0 = System.nanoTime();
                // A cold start: the hollow agents all start at once in a warm JVM (as each node's own JVM would be its
                // own), and what it costs the control plane is measured until every agent has acked the head.
                if (hollowAgents > 0) {
                    t0 = fleetWarm.get();
                }
                MeterRegistry meters = api.getBean(MeterRegistry.class);
                long coldCpu0 = processCpuNanos();
                long coldPostgres0 = postgresCpuNanos();
                double bytes0 = snapshotBytes(meters);
                long sent0 = meters.get("rulesync.snapshot.bytes").tag("encoding", "gzip").summary().count();
                // Inside the measured time: polls at once, then every 100 ms; a benchmark has no deadline.
                await("every agent at version " + head).forever().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                        .until(() -> agentNodes.stream().allMatch(n -> acked.getOrDefault(n, 0L) >= head));
                System.out.printf("agents started and at version %d in %.1f s (%d dry-run, %d hollow%s)%n", head,
                        (System.nanoTime() - t0) / 1e9, dryRunAgents, hollowAgents, kernel ? " + 1 real-kernel agent, full load through iptables-restore" : "");
                long snapshotsSent = meters.get("rulesync.snapshot.bytes").tag("encoding", "gzip").summary().count() - sent0;
                double mb = (snapshotBytes(meters) - bytes0) / 1e6;
                System.out.printf("cold start: %d snapshots, %.1f MB sent gzip (%.0f kB each); CPU: control plane process %.1f s, "
                        + "PostgreSQL %.1f s%n", snapshotsSent, mb, mb * 1e3 / Math.max(1, snapshotsSent), (processCpuNanos() - coldCpu0) / 1e9,
                        (postgresCpuNanos() - coldPostgres0) / 1e9);
                if (fleet != null) {
                    System.out.println("memory: " + fleetHeap(hollowAgents));
                }

                // Warm-up: 20 s of the same changes, not recorded. The path a version takes after the start (deltas parsed,
                // checked and acked by every agent, written to every watch) has not run yet, and cold it ran interpreted in
                // hundreds of agent threads queued for the JIT: the first recorded changes measured a 15 s stall.
                List<Long> warmUp = changes(producer, services, endpoints, nodes, rate, rate * 20, 50_000);
                awaitAll(agentNodes, clock.versionOf(warmUp.get(warmUp.size() - 1)));
                // Steady endpoint changes; each event's latency is measured to every agent's ack of its version.
                recording = true;
                long cpu0 = processCpuNanos();
                long fleetCpu0 = fleetCpuNanos();
                long postgresCpu0 = postgresCpuNanos();
                List<Long> offsets = changes(producer, services, endpoints, nodes, rate, rate * seconds, 100);
                long last = clock.versionOf(offsets.get(offsets.size() - 1));
                awaitAll(agentNodes, last);
                // CPU of the steady phase, per agent and version delivered: what the transport costs.
                double agentVersions = (double) simulated * (last - clock.versionOf(offsets.get(0)) + 1);
                double control = (processCpuNanos() - cpu0) / 1e6;
                double fleetMs = (fleetCpuNanos() - fleetCpu0) / 1e6;
                double pg = (postgresCpuNanos() - postgresCpu0) / 1e6;
                System.out.printf("CPU in the steady phase: control plane process (broker, compiler, api%s) %.1f s, PostgreSQL %.1f s, "
                        + "hollow agents' process %.1f s; per agent and version: %.2f ms + %.2f ms + %.2f ms (%,.0f agent-versions)%n",
                        simulated > hollowAgents ? ", dry-run agents" : "", control / 1e3, pg / 1e3, fleetMs / 1e3, control / agentVersions,
                        pg / agentVersions, fleetMs / agentVersions, agentVersions);
                List<Long> allDry = new ArrayList<>();
                List<Long> real = new ArrayList<>();
                List<Long> stored = new ArrayList<>();
                List<Long> fanOut = new ArrayList<>();
                // Each agent's own latency too, every (agent, change) pair: whether a few agents or all of them are slow.
                List<Long> each = new ArrayList<>();
                Map<String, Integer> slow = new java.util.TreeMap<>();
                for (long offset : offsets) {
                    long v = clock.versionOf(offset);
                    long sent = clock.sentAt(offset);
                    long worst = 0;
                    for (String n : agentNodes.subList(0, simulated)) {
                        long l = reached(n, v) - sent;
                        each.add(l);
                        if (l > 5_000_000_000L) {
                            slow.merge(n, 1, Integer::sum);
                        }
                        worst = Math.max(worst, l);
                    }
                    allDry.add(worst);
                    stored.add(clock.storedAfter(offset));
                    fanOut.add(worst - clock.storedAfter(offset));
                    if (kernel) {
                        real.add(reached(realNode, v) - sent);
                    }
                }
                System.out.printf("change → version stored (compiler): %s%n", summary(stored));
                if (simulated > 0) {
                    System.out.printf("change → acked, each agent on its own: %s; agents ever over 5 s: %d (most often: %s)%n", summary(each),
                            slow.size(), slow.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(5)
                                    .map(e -> e.getKey() + " ×" + e.getValue()).toList());
                }
                if (simulated > 0) {
                    System.out.printf("version stored → acked by all %d agents (the fan-out, %s): %s%n", simulated, transport.id(),
                            summary(fanOut));
                    System.out.printf("change → acked by all %d agents (%d dry-run, %d hollow), %d changes at %d/s: %s%n", simulated,
                            dryRunAgents, hollowAgents, offsets.size(), rate, summary(allDry));
                    // In the order sent: whether the slow ones are scattered or one stall that every agent waited out.
                    System.out.println("  each change in turn (s): " + allDry.stream().map(l -> String.format("%.1f", l / 1e9))
                            .collect(java.util.stream.Collectors.joining(" ")));
                }
                if (kernel) {
                    System.out.printf("change → acked by the real-kernel agent (%d Services in its netns): %s%n", services, summary(real));
                    List<Long> d = applyMillis.getOrDefault(realNode, List.of());
                    System.out.printf("real-kernel agent: %d applies for %d changes; apply duration (from its acks): %s%n", d.size(),
                            offsets.size(), summary(d));
                }
                if (dryRunAgents > 0) {
                    List<Long> d = applyMillis.getOrDefault("node-0", List.of());
                    System.out.printf("dry-run agent node-0: %d applies; apply duration: %s%n", d.size(), summary(d));
                }
            }
        } finally {
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
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
            PipelineBenchmark.admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }

    private static final ApiTokens.Issued AGENT_TOKEN = ApiTokens.issue("bench-agents", Role.AGENT);

    private AgentLoop agent(String bootstrap, URI api, String node, Netfilter nf, Path state) throws InterruptedException {
        return agent(bootstrap, api, node, new IptablesMode(node, new Applier(List.of(nf), null, Clock.systemUTC()),
                new Conntrack(HostCommand.PROCESSES, true), Duration.ofSeconds(30), 200), state);
    }

    private AgentLoop agent(String bootstrap, URI api, String node, KernelMode mode, Path state) throws InterruptedException {
        ApiConnection connection = clients.next(api, AGENT_TOKEN.token());
        // Acks are timed from node_status; the observer only collects how long each apply took.
        return config(bootstrap, api, CLUSTER, AGENT_TOKEN.token(), node, state, transport).loop(connection, new ApiSnapshots(connection), mode,
                this::record).start();
    }

    /** One simulated node's configuration (its kernel is given by the caller), reaching the control plane by {@code via}. */
    static AgentConfig config(String bootstrap, URI api, String cluster, String token, String node, Path state, Transport via) {
        return new AgentConfig(cluster, node, bootstrap, Map.of(), Topics.DEFAULT, api, token, List.of(IpFamily.IPV4), null, null, state,
                Duration.ofSeconds(30), 200).withTransport(via);
    }

    /**
     * The hollow agents in a child process under {@code nice -n 19} ({@link HollowFleet}); their acks are timed where
     * PostgreSQL records them, and its output is shown but for INFO lines. Closing the returned handle ends it.
     */
    private AutoCloseable hollowFleet(URI api, int first, int count, String bootstrap) throws Exception {
        // Hundreds of agents inflating their gzip snapshots at once hold JDK 17's GC locker (the Inflater pins its arrays)
        // so often that G1 gives up after two retries and throws OutOfMemoryError with the heap mostly free: one agent
        // per JVM never meets this, a fleet in one JVM does. Later JDKs have no GC locker in G1 (JDK-8308507).
        List<String> cmd = new ArrayList<>(List.of("nice", "-n", "19", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx12g", "-XX:+UnlockDiagnosticVMOptions", "-XX:GCLockerRetryAllocationCount=1000", "-cp", System.getProperty("java.class.path"), HollowFleet.class.getName(), api.toString(), AGENT_TOKEN.token(),
                CLUSTER, Integer.toString(first), Integer.toString(count), transport.id(), bootstrap));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        fleet = p;
        // A fleet that ends on its own lost agents (it says which): the waits for all agents would never end.
        p.onExit().thenAccept(ended -> {
            if (ended.exitValue() != 0 && !fleetClosing) {
                System.out.println("the hollow fleet ended with status " + ended.exitValue() + "; stopping");
                System.exit(1);
            }
        });
        java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        Thread reader = new Thread(() -> {
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
        }, "hollow-fleet-output");
        reader.setDaemon(true);
        reader.start();
        System.out.printf("%d hollow agents in a child process (nice 19, pid %d)%n", count, p.pid());
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
            String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
            new ProcessBuilder(jcmd, Long.toString(fleet.pid()), "GC.run").redirectErrorStream(true).start().waitFor();
            Process info = new ProcessBuilder(jcmd, Long.toString(fleet.pid()), "GC.heap_info").redirectErrorStream(true).start();
            String out = new String(info.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("used (\\d+)K").matcher(out);
            if (!m.find()) {
                return "heap not read: " + out.strip();
            }
            long usedKb = Long.parseLong(m.group(1));
            return String.format("the hollow fleet's heap after a full GC %.0f MB, %.1f MB per agent", usedKb / 1024.0, usedKb / 1024.0 / agents);
        } catch (java.io.IOException e) {
            return "heap not read: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "heap not read: interrupted";
        }
    }

    /** Sends {@code count} endpoint changes at {@code rate} a second, paced by the clock; returns their offsets once stored. */
    private List<Long> changes(KafkaProducer<String, String> producer, int services, int endpoints, int nodes, int rate, int count,
            int generation) throws Exception {
        List<Long> offsets = new ArrayList<>();
        long intervalNanos = 1_000_000_000L / rate;
        long start = System.nanoTime();
        for (int k = 0; k < count; k++) {
            long wait = start + k * intervalNanos - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
            int svc = (k * 7919) % services;
            offsets.add(send(producer, List.of(up(PipelineBenchmark.slice(svc, endpoints, nodes, generation + k)))));
        }
        clock.awaitStored(offsets.get(offsets.size() - 1));
        return offsets;
    }

    private void awaitAll(List<String> agentNodes, long version) {
        await("every agent at version " + version).forever().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50))
                .until(() -> agentNodes.stream().allMatch(n -> acked.getOrDefault(n, 0L) >= version));
    }

    private static double snapshotBytes(MeterRegistry meters) {
        return meters.get("rulesync.snapshot.bytes").tag("encoding", "gzip").summary().totalAmount();
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private long fleetCpuNanos() {
        return fleet == null ? 0 : fleet.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /** CPU of every postgres process on this machine (the benchmark's database is the only busy one). */
    private static long postgresCpuNanos() {
        return ProcessHandle.allProcesses().filter(ph -> ph.info().command().map(c -> c.contains("postgres")).orElse(false))
                .mapToLong(ph -> ph.info().totalCpuDuration().map(Duration::toNanos).orElse(0L)).sum();
    }

    /** When node first acked version v or later. */
    private long reached(String node, long v) {
        long best = Long.MAX_VALUE;
        for (Map.Entry<Long, Long> e : ackedAt.getOrDefault(node, Map.of()).entrySet()) {
            if (e.getKey() >= v) {
                best = Math.min(best, e.getValue());
            }
        }
        return best;
    }

    /** An ack as its agent sent it: how long its apply took (when it was stored is read from node_status). */
    private void record(NodeAck a) {
        if (a.status() == NodeAck.Status.APPLIED && recording) {
            applyMillis.computeIfAbsent(a.node(), k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                    .add(a.durationMs() * 1_000_000);
        }
    }

    /** Node {@code node} was first recorded running {@code version} at {@code now} (nanoTime). */
    private void applied(String node, long version, long now) {
        acked.merge(node, version, Math::max);
        ackedAt.computeIfAbsent(node, k -> new ConcurrentHashMap<>()).putIfAbsent(version, now);
    }

    private void watchNodeStatus(String url) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "postgres", "");
                java.sql.PreparedStatement q = c.prepareStatement("SELECT node, running FROM node_status WHERE cluster = ?")) {
            q.setString(1, CLUSTER);
            while (true) {
                long now = System.nanoTime();
                try (java.sql.ResultSet rs = q.executeQuery()) {
                    while (rs.next()) {
                        if (rs.getLong(2) > acked.getOrDefault(rs.getString(1), 0L)) {
                            applied(rs.getString(1), rs.getLong(2), now);
                        }
                    }
                }
                Thread.sleep(20);
            }
        } catch (Exception e) {
            System.out.println("reading node_status: " + e);
        }
    }

    private long send(KafkaProducer<String, String> producer, List<String> values) throws Exception {
        return clock.send(producer, topics.events(), CLUSTER, values);
    }

    private static String up(io.rulesync.model.cluster.ClusterObject o) {
        return EventCodec.encode(new ClusterEvent.ObjectUpserted(CLUSTER, o, "1", Instant.now()));
    }

    private static String summary(List<Long> nanos) {
        long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format("p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms", pct(s, 50), pct(s, 90), pct(s, 99), s[s.length - 1] / 1e6);
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
