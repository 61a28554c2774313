package io.rulesync.e2e.faults;

import io.rulesync.api.cli.ApiCommand;
import io.rulesync.model.topic.Topics;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import picocli.CommandLine;

/**
 * Fault: the compiler killed with SIGKILL at random moments while a steady stream of changes arrives
 * (results: RELIABILITY.md). The compiler runs as a process of its own ({@code rulesync.jar compiler})
 * against an in-process KRaft broker and a PostgreSQL database of the harness's own; the changes come
 * through the watcher's real sink (one transactional writer for the cluster). KILLS times: wait until
 * the compiler is healthy, let it work for a random 0.5-3 s, kill it, start it again. Then the stream
 * stops, one last compiler catches up, and the harness checks that nothing was lost ({@link PipelineChecks}) and that
 * the three dry-run agents (processes of their own, fed by the api in the harness) all run the newest version.
 * The cluster is test-support's {@link SyntheticCluster} (3 endpoints a Service, 3 nodes).
 * Usage: {@code faults/compiler-kill [KILLS SERVICES RATE]} (default 200 200 50: 200 Services, 50 changes/s).
 */
public final class CompilerKillHarness {
    private static final String CLUSTER = "faults";

    private CompilerKillHarness() {}

    public static void main(String[] args) throws Exception {
        int kills = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int services = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        Path jar = jar();
        String kafka = TestInfrastructure.kafkaBootstrapServers();
        String topic = Topics.DEFAULT.events(); // the harness's broker is its own
        boolean ok;
        DryRunAgents agents = null;
        ConfigurableApplicationContext api = null;
        try (TestDatabase db = TestDatabase.create()) {
            System.out.printf(
                    "compiler killed %d times; %d Services x %d endpoints over %d nodes, %d changes/s; topic %s%n",
                    kills, services, ChangeStream.ENDPOINTS, ChangeStream.NODES, rate, topic);
            ChangeStream stream = new ChangeStream(CLUSTER, kafka, topic, services, rate);
            stream.start();
            PipelineChecks checks = new PipelineChecks(CLUSTER, db.dataSource());
            // The api (in the harness: it is not what is killed here) serves the agents' snapshots.
            ApiCommand apiCommand = new ApiCommand().withTokens(DryRunAgents.tokenLines(CLUSTER, ChangeStream.NODES));
            new CommandLine(apiCommand)
                    .parseArgs("--port=0", "--address=127.0.0.1", "--db-url=" + db.url(), "--db-user=" + db.user());
            apiCommand.withDatabasePassword(db.password());
            api = apiCommand.start();
            agents = DryRunAgents.start(
                    jar,
                    CLUSTER,
                    ChangeStream.NODES,
                    kafka,
                    "http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port"),
                    Path.of("target", "faults-compiler-kill"));

            Random random = new Random(kills);
            List<Long> startups = new ArrayList<>();
            List<Long> takeovers = new ArrayList<>();
            for (int k = 0; k < kills; k++) {
                long before = checks.committed();
                RulesyncProcess c = compiler(jar, kafka, db.url(), db.user(), db.passwordOptions());
                startups.add(c.awaitHealthy(Duration.ofSeconds(120)));
                // Working, not just started: it was assigned the partitions and committed a batch of its own.
                while (checks.committed() <= before) {
                    if (System.nanoTime() - c.startedAt()
                            > Duration.ofSeconds(120).toNanos()) {
                        throw new IllegalStateException("the compiler committed nothing within 120 s of its start");
                    }
                    Thread.sleep(100);
                }
                takeovers.add((System.nanoTime() - c.startedAt()) / 1_000_000);
                Thread.sleep(500 + random.nextInt(2500));
                c.kill();
                if ((k + 1) % 20 == 0) {
                    System.out.printf(
                            "  %d kills, %,d events sent%n",
                            k + 1, stream.delivered().size());
                }
            }
            stream.stop();

            RulesyncProcess last = compiler(jar, kafka, db.url(), db.user(), db.passwordOptions());
            last.awaitHealthy(Duration.ofSeconds(120));
            checks.awaitStored(stream.delivered().size(), Duration.ofMinutes(3));
            long head = checks.head();
            // The agents' acks are stored by the compiler: it runs until they converged.
            JdbcTemplate sql = new JdbcTemplate(db.dataSource());
            boolean converged = agents.awaitAll(sql, head, Duration.ofMinutes(2));
            Map<String, Long> running = agents.running(sql);
            last.stop();

            List<String> failures = new ArrayList<>(checks.failures(stream));
            failures.addAll(agents.exited());
            if (!converged) {
                failures.add("agents: not every node runs version " + head + ": " + running);
            }
            long[] s = startups.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] t = takeovers.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf(
                    "kills: %d; compiler start to healthy: median %.1f s, max %.1f s; to its first committed batch: "
                            + "median %.1f s, max %.1f s%n",
                    kills,
                    s[s.length / 2] / 1000.0,
                    s[s.length - 1] / 1000.0,
                    t[t.length / 2] / 1000.0,
                    t[t.length - 1] / 1000.0);
            System.out.printf(
                    "events: %,d delivered, %,d stored (%d refused sends retried by the sink); versions: %,d, 1..%d%n",
                    stream.delivered().size(), checks.stored(), stream.retried(), checks.head(), checks.head());
            System.out.printf(
                    "rules of the newest version equal the compile of the final objects: %s; the agents run %s%n",
                    checks.newestRulesMatch(stream), running);
            System.out.println(
                    failures.isEmpty() ? "RESULT: nothing lost" : "RESULT: FAILED: " + String.join("; ", failures));
            ok = failures.isEmpty();
        } finally {
            if (agents != null) {
                agents.close();
            }
            if (api != null) {
                api.close();
            }
        }
        // After the database is dropped (closing it above), not inside: an exit there would leave it behind.
        System.exit(ok ? 0 : 1);
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("rulesync.jar", "demo/target/rulesync-demo.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(
                    jar + " is missing: build it with ./rulesync --help (or mvn -DskipTests package)");
        }
        return jar;
    }

    /**
     * The compiler as a process of its own. A killed member holds its partitions until its session expires (Kafka's
     * default: 45 s); the harnesses kill every few seconds, so their compilers use a short session, as a deployment
     * that wants fast failover would.
     */
    static RulesyncProcess compiler(Path jar, String kafka, String url, String user, List<String> password)
            throws IOException {
        int port = RulesyncProcess.freePort();
        List<String> args = new ArrayList<>(List.of(
                "compiler",
                "--kafka",
                kafka,
                "--db-url",
                url,
                "--db-user",
                user,
                "--port",
                Integer.toString(port),
                "--kafka-config",
                kafkaConfig().toString()));
        args.addAll(password);
        return RulesyncProcess.start(
                "compiler", jar, List.of("-Xmx768m"), args, "http://127.0.0.1:" + port + "/actuator/health");
    }

    private static Path kafkaConfig() throws IOException {
        Path p = Path.of("target", "faults-kafka.properties");
        Files.createDirectories(p.getParent());
        Files.writeString(p, "session.timeout.ms=6000\nheartbeat.interval.ms=1000\n");
        return p;
    }
}
