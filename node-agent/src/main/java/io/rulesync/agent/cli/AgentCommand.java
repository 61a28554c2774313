package io.rulesync.agent.cli;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.feed.Transport;
import io.rulesync.agent.metrics.MetricsServer;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.client.TokenFile;
import io.rulesync.client.tls.TrustRoots;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import io.rulesync.process.BindAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code rulesync agent --cluster ID --node NAME}: keeps this node's kernel on the latest version
 * of its cluster's rules and acknowledges every version it applies or refuses.
 */
@Command(
        name = "agent",
        mixinStandardHelpOptions = true,
        description =
                "Applies the cluster's rule deltas to this node with iptables-restore, verifies them and acknowledges.")
public final class AgentCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(AgentCommand.class);
    /** The api token, when no file is named. */
    public static final String ENV_API_TOKEN = "RULESYNC_API_TOKEN";
    /** Kafka's settings that hold secrets (passwords, JAAS configurations), by its own definitions. */
    private static final Set<String> KAFKA_SECRETS = Stream.of(ConsumerConfig.configDef(), ProducerConfig.configDef())
            .flatMap(d -> d.configKeys().values().stream())
            .filter(k -> k.type == ConfigDef.Type.PASSWORD)
            .map(k -> k.name)
            .collect(Collectors.toUnmodifiableSet());

    @Option(names = "--cluster", required = true, description = "Cluster id, as in the watcher's fleet file.")
    String cluster;

    @Option(names = "--node", required = true, description = "This node's name (the Kubernetes Node object's).")
    String node;

    @Option(
            names = "--transport",
            defaultValue = "stream",
            paramLabel = "stream|api|kafka",
            converter = TransportConverter.class,
            description =
                    "How deltas arrive and acks leave. stream: one stream to the api (--stream) carries versions down and "
                            + "acks up. api: a watch and POSTs to --api. Both with the agent token, which reads only its own cluster; the "
                            + "node needs no Kafka credentials. kafka: the deltas topic, whose partitions clusters share (only for agents inside "
                            + "the control plane's trust boundary), and acks POSTed to --api as above. Default: ${DEFAULT-VALUE}.")
    Transport transport;

    @Option(
            names = "--stream",
            paramLabel = "HOST:PORT[,HOST:PORT...]",
            description =
                    "The api replicas' node streams (--transport stream): a list, of which the node holds one picked at random "
                            + "and moves to another when it goes, or a gRPC target such as dns:///rulesync-api-streams:8081. Default: the "
                            + "--api host, port " + AgentConfig.DEFAULT_STREAM_PORT + ".")
    String stream;

    @Option(
            names = "--ack-interval",
            defaultValue = "0",
            paramLabel = "MILLISECONDS",
            description =
                    "With the stream or api transport: the least time between two sends of acks; what the agent applies meanwhile goes in "
                            + "the next one, and a failure goes at once. 0 (the default) acks each version as soon as the last ack was taken; "
                            + "a large fleet sets a few seconds so that acks cost the api and PostgreSQL a rate per node, not per node and "
                            + "version.")
    long ackIntervalMillis;

    @Option(
            names = "--kafka",
            defaultValue = "localhost:9092",
            paramLabel = "HOST:PORT[,...]",
            description = "Kafka bootstrap servers (--transport kafka). Default: ${DEFAULT-VALUE}.")
    String kafka;

    @Option(
            names = "--mode",
            defaultValue = "iptables",
            paramLabel = "iptables|ipvs|nftables",
            converter = ModeConverter.class,
            description = "What to program, as kube-proxy's --proxy-mode. Default: ${DEFAULT-VALUE}.")
    ProxyMode mode;

    @Option(
            names = {"--mode-unavailable", "--ipvs-unavailable"},
            defaultValue = "fallback",
            paramLabel = "fallback|refuse",
            converter = WhenUnavailableConverter.class,
            description =
                    "When ipvs or nftables is asked for and this node cannot run it (no ip_vs; nft or the kernel too old): "
                            + "program iptables mode instead, or apply nothing and ack every version FAILED with the reason. "
                            + "Either way the acks say why. Default: ${DEFAULT-VALUE}.")
    WhenUnavailable modeUnavailable;

    @Option(
            names = "--ipvs-drain-timeout",
            defaultValue = "900",
            paramLabel = "SECONDS",
            description =
                    "IPVS mode: a removed TCP real server keeps weight 0 until its connections end, at most this long. "
                            + "UDP and SCTP ones are removed at once. Default: ${DEFAULT-VALUE}.")
    long ipvsDrainSeconds;

    @Option(
            names = "--ipvs-exclude-cidrs",
            split = ",",
            paramLabel = "CIDR[,CIDR...]",
            converter = CidrConverter.class,
            description =
                    "IPVS mode: virtual servers in these ranges belong to someone else (keepalived, ...); the agent never "
                            + "deletes them, as kube-proxy's flag of the same name. Default: none.")
    List<Cidr> ipvsExcludeCidrs = new ArrayList<>();

    @Option(
            names = "--metrics-bind-address",
            defaultValue = "127.0.0.1:10249",
            paramLabel = "HOST:PORT|off",
            converter = BindAddressConverter.class,
            description =
                    "Serve /metrics (Prometheus, no token) here, as kube-proxy's flag of the same name: this host only "
                            + "by default; 0.0.0.0:10249 (or the node's address) lets a scraper in, so mind who else can reach it. "
                            + "'off' serves none. Default: ${DEFAULT-VALUE}.")
    InetSocketAddress metricsAddress;

    @Option(
            names = "--healthz-bind-address",
            defaultValue = "0.0.0.0:10256",
            paramLabel = "HOST:PORT|off",
            converter = BindAddressConverter.class,
            description =
                    "Serve /healthz (200 once a version is applied) here, for probes and load balancers, as kube-proxy's "
                            + "flag of the same name. 'off' serves none. Default: ${DEFAULT-VALUE}.")
    InetSocketAddress healthzAddress;

    @Option(names = "--metrics-address", hidden = true)
    void renamedMetricsAddress(String ignored) {
        throw new ParameterException(
                spec.commandLine(),
                "--metrics-address is now --metrics-bind-address (/metrics, default "
                        + "127.0.0.1:10249) and --healthz-bind-address (/healthz, default 0.0.0.0:10256), as kube-proxy has them");
    }

    @Option(
            names = "--kafka-config",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_KAFKA_CONFIG}",
            description =
                    "Kafka client settings (TLS, SASL) in Kafka's client.properties format. Default: $RULESYNC_KAFKA_CONFIG.")
    String kafkaConfig;

    @Option(
            names = "--kafka-property",
            paramLabel = "KEY=VALUE",
            description = "Extra Kafka client setting (TLS, SASL), repeatable, e.g. security.protocol=SSL.")
    List<String> kafkaProperties = new ArrayList<>();

    @Option(
            names = "--api",
            defaultValue = "http://localhost:8080",
            paramLabel = "URL",
            description =
                    "The api role: snapshots, and with --transport api deltas and acks. Default: ${DEFAULT-VALUE}.")
    URI api;

    @Option(
            names = "--api-token-file",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_API_TOKEN_FILE}",
            description =
                    "The api's bearer token: the node's projected ServiceAccount token (audience rulesync), or an agent "
                            + "token from 'rulesync token' bound to this node; the first line of FILE, read again when the file changes, which "
                            + "other users must not be able to read (chmod 600 or 640). Default: $RULESYNC_API_TOKEN_FILE; without a file, the "
                            + "environment variable RULESYNC_API_TOKEN. There is no --api-token: other local users can read a command line.")
    String apiTokenFile;

    @Option(
            names = "--ca-file",
            paramLabel = "FILE",
            description =
                    "The CA certificates (PEM) the api's certificate is verified "
                            + "by, for its REST endpoints and its node streams. Without it, an https --api is verified by the Java runtime's roots.")
    Path caFile;

    @Option(names = "--api-token", hidden = true)
    void refuseApiToken(String ignored) {
        throw new ParameterException(
                spec.commandLine(),
                "--api-token is not taken: other local users can read a command line. "
                        + "Give the token in the environment variable " + ENV_API_TOKEN
                        + ", or in a file only you can read with "
                        + "--api-token-file FILE.");
    }

    @Spec
    CommandSpec spec;

    /** The environment, where the token is read when no file names it (tests give another). */
    Map<String, String> env = System.getenv();

    @Option(
            names = "--ip-families",
            split = ",",
            defaultValue = "ipv4,ipv6",
            converter = FamilyConverter.class,
            description = "Families this node programs. Default: ${DEFAULT-VALUE}.")
    List<IpFamily> families;

    @Option(
            names = "--dry-run",
            paramLabel = "DIR",
            description = "Write the rules to DIR (NODE-ipv4.rules, NODE-ipv4.last-restore) instead of the kernel.")
    Path dryRun;

    @Option(
            names = "--netns",
            hidden = true,
            description = "Program this named network namespace instead (labs, tests).")
    String netns;

    @Option(
            names = "--state-dir",
            description =
                    "Where the applied version is kept across restarts. Default: /var/lib/rulesync/agent, or the --dry-run DIR.")
    Path stateDir;

    @Option(
            names = "--verify-interval",
            defaultValue = "30",
            description = "Seconds between drift checks. Default: ${DEFAULT-VALUE}.")
    long verifySeconds;

    @Option(
            names = "--verify-chains",
            defaultValue = "200",
            description = "Owned chains read back per drift check (in turn). Default: ${DEFAULT-VALUE}.")
    int verifyChains;

    @Option(names = "--deltas-topic", defaultValue = "rulesync.rule-deltas", description = "Default: ${DEFAULT-VALUE}.")
    String deltasTopic;

    /** The configuration these options describe; throws IllegalArgumentException naming the bad option. */
    public AgentConfig config() {
        Map<String, Object> settings = new LinkedHashMap<>(KafkaClientConfig.load(kafkaConfig));
        for (String kv : kafkaProperties) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--kafka-property: '" + kv + "' is not KEY=VALUE");
            }
            if (KAFKA_SECRETS.contains(kv.substring(0, eq).strip())) {
                throw new IllegalArgumentException(
                        "--kafka-property: " + kv.substring(0, eq).strip() + " holds a secret, which other local "
                                + "users could read on the command line; put it in the --kafka-config file (Kafka's config providers can "
                                + "take it from the environment: ${env:NAME})");
            }
            settings.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        Topics defaults = Topics.DEFAULT;
        Topics topics = new Topics(defaults.events(), deltasTopic, defaults.deadLetters());
        String token;
        Supplier<String> tokens = null;
        if (apiTokenFile != null && !apiTokenFile.isBlank()) {
            try {
                token = readSecret(Path.of(apiTokenFile));
                tokens = new TokenFile(Path.of(apiTokenFile));
            } catch (IllegalArgumentException | UncheckedIOException e) {
                throw new IllegalArgumentException("--api-token-file " + apiTokenFile + ": " + e.getMessage(), e);
            }
        } else {
            token = env.get(ENV_API_TOKEN);
            token = token == null || token.isBlank() ? null : token.strip();
        }
        // A dry run needs no privileges, so it keeps its state next to its rules.
        Path state = stateDir != null ? stateDir : dryRun != null ? dryRun : Path.of("/var/lib/rulesync/agent");
        return new AgentConfig(
                cluster,
                node,
                kafka,
                settings,
                topics,
                api,
                token,
                List.copyOf(families),
                dryRun,
                netns,
                state,
                Duration.ofSeconds(verifySeconds),
                verifyChains,
                mode,
                modeUnavailable,
                Duration.ofSeconds(ipvsDrainSeconds),
                List.copyOf(ipvsExcludeCidrs),
                transport,
                Duration.ofMillis(ackIntervalMillis),
                stream,
                tokens,
                caFile == null ? null : TrustRoots.of(caFile));
    }

    /** The metrics address, or null for 'off'. */
    InetSocketAddress metricsAddress() {
        return metricsAddress;
    }

    /** The health address, or null for 'off'. */
    InetSocketAddress healthzAddress() {
        return healthzAddress;
    }

    /** Each option's value read as its type, or refused naming it (picocli adds the option). */
    private static <T> T converted(String value, java.util.function.Function<String, T> parse) {
        try {
            return parse.apply(value.trim());
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    static final class TransportConverter implements ITypeConverter<Transport> {
        @Override
        public Transport convert(String value) {
            return converted(value, Transport::parse);
        }
    }

    static final class ModeConverter implements ITypeConverter<ProxyMode> {
        @Override
        public ProxyMode convert(String value) {
            return converted(value, ProxyMode::parse);
        }
    }

    static final class WhenUnavailableConverter implements ITypeConverter<WhenUnavailable> {
        @Override
        public WhenUnavailable convert(String value) {
            return converted(value, WhenUnavailable::parse);
        }
    }

    static final class FamilyConverter implements ITypeConverter<IpFamily> {
        @Override
        public IpFamily convert(String value) {
            return converted(value, v -> {
                try {
                    return IpFamily.fromId(v);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("'" + v + "' is not ipv4 or ipv6", e);
                }
            });
        }
    }

    static final class CidrConverter implements ITypeConverter<Cidr> {
        @Override
        public Cidr convert(String value) {
            return converted(value, Cidr::parse);
        }
    }

    static final class BindAddressConverter implements ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            return converted(value, BindAddress::parse);
        }
    }

    /**
     * The first line of {@code file}, a secret: refused when every user of the machine may read the
     * file. The group may: Kubernetes gives a secret's files to the pod's {@code fsGroup}.
     */
    private static String readSecret(Path file) {
        try {
            boolean everyone;
            try {
                everyone = Files.getPosixFilePermissions(file).contains(PosixFilePermission.OTHERS_READ);
            } catch (UnsupportedOperationException notPosix) {
                everyone = false;
            }
            if (everyone) {
                throw new IllegalArgumentException("every user of this machine may read it; chmod o-r it (600 or 640)");
            }
            List<String> lines = Files.readAllLines(file);
            if (lines.isEmpty() || lines.get(0).isBlank()) {
                throw new IllegalArgumentException("holds no secret on its first line");
            }
            return lines.get(0).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "cannot be read (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        AgentConfig config;
        try {
            config = config();
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        InetSocketAddress metricsAt = metricsAddress;
        InetSocketAddress healthzAt = healthzAddress;
        AgentLoop loop = config.loop().start();
        MetricsServer metrics;
        try {
            metrics = metricsAt == null && healthzAt == null
                    ? null
                    : MetricsServer.start(
                            metricsAt,
                            healthzAt,
                            loop.agent(),
                            config.cluster(),
                            config.node(),
                            () -> loop.died() == null);
        } catch (IOException e) {
            loop.close();
            System.err.println("--metrics-bind-address " + metricsAddress + ", --healthz-bind-address " + healthzAddress
                    + ": " + e.getMessage());
            return 2;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            if (metrics != null) {
                                metrics.close();
                            }
                            loop.close();
                            stopped.countDown();
                        },
                        "agent-shutdown"));
        LOG.atInfo()
                .addKeyValue("cluster", config.cluster())
                .addKeyValue("node", config.node())
                .log(
                        "agent started ({}), api {}, {}",
                        config.dryRun() == null ? "kernel" : "dry run into " + config.dryRun(),
                        config.api(),
                        switch (config.transport()) {
                            case STREAM -> "deltas and acks on a stream to " + config.streamTarget();
                            case API -> "deltas and acks through the api";
                            case KAFKA -> "deltas and acks through kafka " + config.kafka();
                        });
        stopped.await();
        return loop.died() == null ? 0 : 1;
    }
}
