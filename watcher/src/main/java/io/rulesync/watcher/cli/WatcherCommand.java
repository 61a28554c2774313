package io.rulesync.watcher.cli;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.Problem;
import io.rulesync.process.BindAddress;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.fleet.FleetException;
import io.rulesync.watcher.fleet.FleetFile;
import io.rulesync.watcher.metrics.MetricsServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rulesync watcher --fleet FILE --kafka HOST:PORT}: watches every cluster of the fleet file and
 * publishes their changes to Kafka until SIGTERM (or SIGINT), then stops cleanly: informers closed,
 * what is still queued published (for up to 10 s), the producer flushed and closed.
 *
 * <p>Exit 2 when the fleet file is invalid (one line per problem on stderr, each naming file, cluster
 * and field) or a cluster cannot be configured.
 */
@Command(
        name = "watcher",
        description = "Watch the Services, EndpointSlices and Nodes of every cluster in a fleet file and publish "
                + "each change as a cluster event on Kafka (key: cluster id). Runs until SIGTERM.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class WatcherCommand implements Callable<Integer> {
    static final int EXIT_BAD_INPUT = 2;
    private static final Logger log = LoggerFactory.getLogger(WatcherCommand.class);

    @Spec
    private CommandSpec spec;

    @Option(
            names = "--fleet",
            required = true,
            paramLabel = "FILE",
            description = "Fleet file (YAML) listing the clusters: see watcher/README.md.")
    private Path fleet;

    @Option(
            names = "--kafka",
            required = true,
            paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "Kafka bootstrap servers.")
    private String kafka;

    @Option(
            names = "--topic",
            paramLabel = "TOPIC",
            defaultValue = Watcher.DEFAULT_TOPIC,
            description = {"Topic of the cluster events.", "Default: ${DEFAULT-VALUE}"})
    private String topic;

    @Option(
            names = "--kafka-config",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_KAFKA_CONFIG}",
            description = {
                "Kafka client settings (TLS, SASL) in Kafka's client.properties format.",
                "Default: $RULESYNC_KAFKA_CONFIG."
            })
    private String kafkaConfig;

    @Option(
            names = "--producer-property",
            paramLabel = "KEY=VALUE",
            description = {
                "Extra Kafka producer setting; repeatable.",
                "Example: security.protocol=SSL",
                "(acks=all and idempotence always stay on.)"
            })
    private Map<String, String> producerProperties = new LinkedHashMap<>();

    @Option(
            names = "--digest-interval",
            paramLabel = "SECONDS",
            defaultValue = "300",
            description = {
                "Publish each cluster's state digest this often, so that the compiler notices a lost event and "
                        + "asks for a resync; 0 for never. Default: ${DEFAULT-VALUE}."
            })
    private long digestIntervalSeconds;

    @Option(
            names = "--retake-after",
            paramLabel = "SECONDS",
            defaultValue = "600",
            description = {
                "A cluster another watcher took over (a second watcher of it started) is taken back after this "
                        + "long, should that one have stopped; twice as long each time it is taken again. Default: ${DEFAULT-VALUE}."
            })
    private long retakeAfterSeconds;

    @Option(
            names = "--metrics-bind-address",
            paramLabel = "HOST:PORT|off",
            defaultValue = "127.0.0.1:9470",
            description = {
                "Serve Prometheus metrics at http://HOST:PORT/metrics (refused objects per cluster, problem reports, "
                        + "events published and pending), or off. Default: ${DEFAULT-VALUE}; use 0.0.0.0:9470 for a scraper "
                        + "outside the host or pod."
            })
    private String metricsAddress;

    @Option(
            names = "--stats-interval",
            paramLabel = "SECONDS",
            defaultValue = "60",
            description = "Log the watcher's counters this often; 0 for never. Default: ${DEFAULT-VALUE}.")
    private long statsIntervalSeconds;

    @Option(
            names = "--max-file-size",
            paramLabel = "MIB",
            defaultValue = "1024",
            description =
                    "Refuse manifest files larger than this, unread: a safety net against a wrong path. Files are read "
                            + "object by object (an object is at most 3 MiB, as in Kubernetes), so memory does not grow with them. "
                            + "Default: ${DEFAULT-VALUE} MiB.")
    private int maxFileMib;

    private final CountDownLatch stop = new CountDownLatch(1);
    private volatile MetricsServer metrics;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter err = spec.commandLine().getErr();
        FleetConfig config;
        try {
            config = FleetFile.load(fleet);
        } catch (FleetException e) {
            for (Problem p : e.problems()) {
                err.println(p);
            }
            err.flush();
            return EXIT_BAD_INPUT;
        }
        for (String server : kafka.split(",", -1)) {
            if (!server.strip().matches("(\\[[0-9a-fA-F:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}")) {
                err.println("--kafka: '" + server + "' is not HOST:PORT");
                err.flush();
                return EXIT_BAD_INPUT;
            }
        }
        if (maxFileMib < 1 || maxFileMib > ManifestReader.MAX_FILE_LIMIT >> 20) {
            err.println("--max-file-size: " + maxFileMib + " is out of range (1-"
                    + (ManifestReader.MAX_FILE_LIMIT >> 20) + " MiB)");
            err.flush();
            return EXIT_BAD_INPUT;
        }
        InetSocketAddress metricsAt;
        try {
            metricsAt = metricsAddress();
        } catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            err.flush();
            return EXIT_BAD_INPUT;
        }
        Properties producer = new Properties();
        producer.putAll(KafkaClientConfig.load(kafkaConfig));
        producer.putAll(producerProperties);
        producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);

        Watcher watcher;
        try {
            watcher = Watcher.start(
                    config,
                    producer,
                    topic,
                    Watcher.Options.defaults()
                            .withDigestInterval(Duration.ofSeconds(Math.max(0, digestIntervalSeconds)))
                            .withManifestFileLimit((long) maxFileMib << 20),
                    Duration.ofSeconds(Math.max(1, retakeAfterSeconds)));
        } catch (IllegalStateException | IllegalArgumentException e) {
            err.println(fleet + ": " + e.getMessage());
            err.flush();
            return EXIT_BAD_INPUT;
        }
        if (metricsAt != null) {
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            watcher.bindMetrics(registry);
            try {
                metrics = MetricsServer.start(metricsAt, registry);
            } catch (IOException e) {
                watcher.close();
                err.println("--metrics-bind-address " + metricsAddress + ": " + e.getMessage());
                err.flush();
                return EXIT_BAD_INPUT;
            }
            log.info("metrics at http://{}:{}/metrics", metricsAt.getHostString(), metrics.port());
        }
        Thread hook = new Thread(
                () -> {
                    log.info("stopping");
                    watcher.close();
                    closeMetrics();
                    stop.countDown();
                },
                "rulesync-watcher-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        log.info(
                "watching {} clusters; publishing to topic {} on {}",
                config.clusters().size(),
                topic,
                kafka);

        long interval = statsIntervalSeconds > 0 ? statsIntervalSeconds : Long.MAX_VALUE / 2_000_000_000L;
        while (!stop.await(interval, TimeUnit.SECONDS)) {
            Watcher.Stats s = watcher.stats();
            log.info(
                    "published {} events ({} pending, {} rejected, {} unchanged skipped{})",
                    s.published(),
                    s.pending(),
                    s.rejected(),
                    s.suppressed(),
                    s.kafkaAvailable() ? "" : "; Kafka unavailable");
        }
        watcher.close();
        closeMetrics();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // already shutting down: the hook is running or has run
        }
        return 0;
    }

    private InetSocketAddress metricsAddress() {
        try {
            return BindAddress.parse(metricsAddress);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--metrics-bind-address: " + e.getMessage(), e);
        }
    }

    private synchronized void closeMetrics() {
        if (metrics != null) {
            metrics.close();
        }
    }

    /** The port metrics are served on while {@link #call()} runs; -1 when off or not started. */
    public int metricsPort() {
        MetricsServer m = metrics;
        return m == null ? -1 : m.port();
    }

    /** Stops a running {@link #call()} as SIGTERM would (for tests and embedding). */
    public void stop() {
        stop.countDown();
    }
}
