package io.rulesync.demo;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Credentials;
import io.rulesync.api.access.Role;
import io.rulesync.api.cli.ApiCommand;
import io.rulesync.api.rollout.Rollouts;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.VersionHistory;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.fleet.FleetException;
import io.rulesync.watcher.fleet.FleetFile;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rulesync demo}: the whole system in one process on embedded defaults: an in-process KRaft
 * broker, PostgreSQL (found or embedded, see {@link DemoDatabase}), the compiler service, the api,
 * the watcher on the example fleet, and one dry-run agent per node writing its rules to files.
 * Prints every version as it is stored and as each node applies it; editing a file under the
 * fleet's folders produces a new one within a second.
 */
@Command(
        name = "demo",
        description = "Run everything in one process on embedded defaults (Kafka, PostgreSQL, watcher, compiler, api, "
                + "one dry-run agent per node) and print each new version as it is stored and applied.",
        mixinStandardHelpOptions = true)
public final class DemoCommand implements Callable<Integer> {
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--fleet",
            defaultValue = "examples/fleet.yaml",
            paramLabel = "FILE",
            description = "Fleet file of the clusters to watch. Default: ${DEFAULT-VALUE}.")
    private Path fleetFile;

    @Option(
            names = "--api-port",
            defaultValue = "8080",
            description = "Port of the api (0: any free port). Default: ${DEFAULT-VALUE}.")
    private int apiPort;

    @Option(
            names = "--rules-dir",
            paramLabel = "DIR",
            description =
                    "Where the dry-run agents write each node's rules. Default: a temporary directory, deleted at exit.")
    private Path rulesDir;

    @Option(
            names = "--nftables-cluster",
            defaultValue = "edge",
            paramLabel = "CLUSTER",
            description =
                    "The cluster whose agents program kube-proxy's nftables mode (writing nft -f files); the others' "
                            + "program iptables mode. Default: ${DEFAULT-VALUE}.")
    private String nftablesCluster;

    private final Map<String, String> env;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile Runnable started = () -> {};

    public DemoCommand() {
        this(System.getenv());
    }

    /** For tests: another environment (it chooses the database), and a hook once everything runs. */
    DemoCommand(Map<String, String> env) {
        this.env = env;
    }

    void onStarted(Runnable r) {
        this.started = r;
    }

    /** Ends {@link #call()} as Ctrl-C would. */
    void stop() {
        stop.countDown();
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        FleetConfig fleet;
        try {
            fleet = FleetFile.load(fleetFile);
        } catch (FleetException e) {
            for (Problem p : e.problems()) {
                err.println(p);
            }
            err.flush();
            return 2;
        }
        QuietLogging.apply(QuietLogging.KAFKA_BROKER);
        QuietLogging.apply(QuietLogging.EMBEDDED_POSTGRES);
        List<AutoCloseable> running = new ArrayList<>();
        // On Ctrl-C the JVM exits when its hooks return: this one waits for the orderly stop below.
        Thread hook = new Thread(
                () -> {
                    stop();
                    try {
                        stopped.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "rulesync-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            say(out, "starting Kafka (in-process KRaft broker)");
            Topics topics = Topics.DEFAULT;
            EmbeddedKafka kafka =
                    EmbeddedKafka.start(6, topics.events(), topics.deltas(), topics.deadLetters(), topics.resyncs());
            running.add(kafka);
            DemoDatabase db;
            try {
                db = DemoDatabase.choose(env);
            } catch (IllegalStateException e) {
                err.println(e.getMessage());
                err.flush();
                return 1;
            }
            running.add(db);
            say(out, "Kafka at " + kafka.bootstrapServers() + "; " + db.description());

            ConfigurableApplicationContext compiler = new SpringApplicationBuilder(CompilerApplication.class)
                    .web(WebApplicationType.NONE)
                    .properties(compilerProperties(kafka, db))
                    .registerShutdownHook(false)
                    .initializers(ctx -> ((GenericApplicationContext) ctx)
                            .registerBean(
                                    PartitionProcessor.VersionListener.class,
                                    () -> (cluster, seq, diff, cause) -> say(out, describe(cluster, seq, diff, cause))))
                    .run();
            running.add(compiler::close);
            VersionHistory store = compiler.getBean(VersionHistory.class);
            List<String> resumed = new ArrayList<>();
            fleet.clusters().forEach(c -> {
                long head = store.head(c.id());
                if (head > 0) {
                    resumed.add(c.id() + " at v" + head);
                }
            });
            say(
                    out,
                    "compiler running"
                            + (resumed.isEmpty()
                                    ? ""
                                    : "; history kept from earlier runs: " + String.join(", ", resumed)
                                            + " (new versions only when something changes)"));

            // Tokens for this run only: made fresh, printed once, configured by their hashes.
            ApiTokens.Issued viewer = ApiTokens.issue("demo-viewer", Role.VIEWER);
            ApiTokens.Issued operator = ApiTokens.issue("demo-operator", Role.OPERATOR);
            // In a file only this user reads, which the api reads again when it changes: each node's own token is added
            // once
            // the nodes are known (only a node's own credential may acknowledge for it).
            Path tokensFile = Files.createTempFile(
                    "rulesync-demo-tokens-",
                    ".txt",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            running.add(() -> Files.deleteIfExists(tokensFile));
            Files.write(tokensFile, List.of(viewer.line(), operator.line()));
            // Stopped in order below (agents, then the api), not by Spring's own hook at Ctrl-C.
            ApiCommand apiCommand = new ApiCommand().withoutShutdownHook();
            // Plain HTTP on 127.0.0.1 only; node streams on any free port: only this process's agents use them.
            new CommandLine(apiCommand)
                    .parseArgs(
                            "--port=" + apiPort,
                            "--stream-port=0",
                            "--address=127.0.0.1",
                            "--tokens-file=" + tokensFile,
                            "--db-url=" + db.jdbcUrl(),
                            "--db-user=" + db.user(),
                            "--events-topic=" + topics.events(),
                            "--fleet=" + fleetFile);
            apiCommand.withDatabasePassword(db.password());
            ConfigurableApplicationContext api = apiCommand.start();
            running.add(api::close);
            // A cluster with a rollout policy in the fleet file: each step of its rollouts, as it is taken.
            api.getBean(Rollouts.class)
                    .onStep(e -> say(
                            out,
                            String.format(
                                    "%-8s v%-4d rollout: %s%s: %s",
                                    e.cluster(),
                                    e.version(),
                                    e.event(),
                                    e.wave() == null ? "" : " '" + e.wave() + "'",
                                    e.detail())));
            URI apiUrl = URI.create("http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port"));
            String streams = "127.0.0.1:" + api.getBean(NodeStreamServer.class).port();
            say(out, "api at " + apiUrl + "/api/v1/clusters (OpenAPI: /v3/api-docs). Tokens for this run:");
            say(out, "  viewer   " + viewer.token());
            say(out, "  operator " + operator.token() + "  (may roll back and resume)");
            say(out, "  e.g. curl -H 'Authorization: Bearer " + viewer.token() + "' " + apiUrl + "/api/v1/clusters");
            say(
                    out,
                    "dashboard at " + apiUrl + "/ (log in with a token above); or the command line: RULESYNC_API="
                            + apiUrl + " RULESYNC_TOKEN=" + viewer.token() + " ./rulesync clusters");

            Properties producer = new Properties();
            producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            Watcher watcher = Watcher.start(fleet, producer, topics.events());
            running.add(watcher);
            watcher.awaitSynced(Duration.ofMinutes(1));
            Path rules = rulesDir != null ? rulesDir : Files.createTempDirectory("rulesync-demo-rules-");
            if (rulesDir == null) {
                running.add(() -> TempDirectories.delete(rules));
            }
            Path state = Files.createTempDirectory("rulesync-demo-agents-");
            running.add(() -> TempDirectories.delete(state));
            Map<String, ApiTokens.Issued> nodeTokens = new TreeMap<>();
            for (var c : fleet.clusters()) {
                for (String node : nodesOf(store, c.id())) {
                    ApiTokens.Issued t = ApiTokens.issue(
                            "demo-" + c.id() + "-" + node, Role.AGENT, new ApiTokens.Scope(c.id(), node));
                    nodeTokens.put(c.id() + "/" + node, t);
                    Files.writeString(tokensFile, t.line() + "\n", StandardOpenOption.APPEND);
                }
            }
            api.getBean(Credentials.class).reload();
            int agents = 0;
            for (var c : fleet.clusters()) {
                for (String node : nodesOf(store, c.id())) {
                    ProxyMode mode = c.id().equals(nftablesCluster) ? ProxyMode.NFTABLES : ProxyMode.IPTABLES;
                    AgentConfig config = new AgentConfig(
                                    c.id(),
                                    node,
                                    kafka.bootstrapServers(),
                                    Map.of(),
                                    topics,
                                    apiUrl,
                                    nodeTokens.get(c.id() + "/" + node).token(),
                                    List.of(IpFamily.IPV4, IpFamily.IPV6),
                                    rules,
                                    null,
                                    state,
                                    Duration.ofSeconds(30),
                                    200,
                                    mode,
                                    WhenUnavailable.REFUSE)
                            .withStream(streams);
                    // The acks are what the demo shows of an agent: each version applied or not, as it happens.
                    AgentLoop loop = config.loop(
                                    ack -> say(out, String.format("%-8s %-8s %s", c.id(), node, applied(ack))))
                            .start();
                    running.add(loop);
                    agents++;
                }
            }
            say(
                    out,
                    agents + " dry-run agents (one per node, each on a stream to " + streams + ") write their rules to "
                            + rules
                            + (fleet.clusters().stream().anyMatch(c -> c.id().equals(nftablesCluster))
                                    ? "; " + nftablesCluster
                                            + "'s in nftables mode (NODE-ipv4.nft), the others' in iptables mode"
                                    : ""));
            say(
                    out,
                    "watching " + fleet.clusters().size() + " clusters of " + fleetFile
                            + "; edit a manifest there to see a new version. Ctrl-C stops.");
            started.run();
            stop.await();
            say(out, "stopping");
            return 0;
        } finally {
            for (int i = running.size() - 1; i >= 0; i--) {
                try {
                    running.get(i).close();
                } catch (Exception e) {
                    err.println("while stopping: " + e.getMessage());
                }
            }
            out.flush();
            stopped.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is already exiting through this very hook
            }
        }
    }

    /**
     * The nodes of a cluster, once a stored version has any (the first versions may hold only the
     * cluster's settings); waits up to a minute.
     */
    private static java.util.Set<String> nodesOf(VersionHistory store, String cluster) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (true) {
            long head = store.head(cluster);
            java.util.Set<String> nodes =
                    head < 1 ? java.util.Set.of() : store.nodes(cluster, head).keySet();
            if (!nodes.isEmpty() || System.nanoTime() > deadline) {
                return nodes;
            }
            Thread.sleep(200);
        }
    }

    private static Map<String, Object> compilerProperties(EmbeddedKafka kafka, DemoDatabase db) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.datasource.url", db.jdbcUrl());
        p.put("spring.datasource.username", db.user());
        p.put("spring.datasource.password", db.password());
        p.put("spring.kafka.bootstrap-servers", kafka.bootstrapServers());
        p.put("spring.main.banner-mode", "off");
        p.put("logging.level.root", "WARN");
        QuietLogging.KAFKA_BROKER.forEach((logger, level) -> p.put("logging.level." + logger, level));
        QuietLogging.EMBEDDED_POSTGRES.forEach((logger, level) -> p.put("logging.level." + logger, level));
        return p;
    }

    /** One line per version: cluster, number, what changed and which objects caused it. */
    static String describe(String cluster, long seq, RulesDiff diff, String cause) {
        Map<?, ?> c = (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(cause);
        Object objects = c.get("objects");
        String why = objects instanceof List<?> l && !l.isEmpty()
                ? String.join(", ", l.stream().map(String::valueOf).toList())
                : "";
        if (c.get("moreObjects") != null) {
            why += " and " + c.get("moreObjects") + " more";
        }
        if (c.get("operatorActions") instanceof List<?> actions) {
            for (Object o : actions) {
                Map<?, ?> a = (Map<?, ?>) o;
                String what = "rollback".equals(a.get("action"))
                        ? "rollback to v" + a.get("toVersion")
                        : String.valueOf(a.get("action"));
                why = what + " by " + a.get("actor") + " (" + a.get("reason") + ")" + (why.isEmpty() ? "" : ", " + why);
            }
        }
        return String.format(
                "%-8s v%-4d %3d fragments, %d nodes changed   <- %s",
                cluster, seq, diff.fragments().size(), diff.nodes().size(), why);
    }

    /** What an agent's ack says, as the agent's own log says it. */
    static String applied(NodeAck ack) {
        String keeps = ack.running() == 0 ? "no known version" : "version " + ack.running();
        return ack.status() == NodeAck.Status.APPLIED
                ? "applied version " + ack.version() + " (" + ack.durationMs() + " ms, " + ack.ruleCount() + " rules, "
                        + ack.mode() + ")"
                : "version " + ack.version() + " not applied, node keeps " + keeps + ": " + ack.error();
    }

    private static void say(PrintWriter out, String line) {
        synchronized (out) {
            out.println(LocalTime.now().format(CLOCK) + "  " + line);
            out.flush();
        }
    }
}
