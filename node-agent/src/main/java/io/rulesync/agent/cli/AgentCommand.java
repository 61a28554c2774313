package io.rulesync.agent.cli;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.metrics.MetricsServer;
import io.rulesync.agent.mode.ModeChoice.WhenIpvsUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.topic.KafkaClientConfig;
import io.rulesync.model.topic.Topics;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rulesync agent --cluster ID --node NAME}: keeps this node's kernel on the latest version
 * of its cluster's rules and acknowledges every version it applies or refuses.
 */
@Command(name = "agent", mixinStandardHelpOptions = true,
        description = "Applies the cluster's rule deltas to this node with iptables-restore, verifies them and acknowledges.")
public final class AgentCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(AgentCommand.class);

    @Option(names = "--cluster", required = true, description = "Cluster id, as in the watcher's fleet file.")
    String cluster;

    @Option(names = "--node", required = true, description = "This node's name (the Kubernetes Node object's).")
    String node;

    @Option(names = "--kafka", defaultValue = "localhost:9092", paramLabel = "HOST:PORT[,...]",
            description = "Kafka bootstrap servers. Default: ${DEFAULT-VALUE}.")
    String kafka;

    @Option(names = "--mode", defaultValue = "iptables", paramLabel = "iptables|ipvs",
            description = "What to program, as kube-proxy's --proxy-mode. Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--ipvs-unavailable", defaultValue = "fallback", paramLabel = "fallback|refuse",
            description = "When ipvs is asked for and this node cannot run it: program iptables mode instead, or apply "
                    + "nothing and ack every version FAILED with the reason. Either way the acks say why. Default: ${DEFAULT-VALUE}.")
    String ipvsUnavailable;

    @Option(names = "--ipvs-drain-timeout", defaultValue = "900", paramLabel = "SECONDS",
            description = "IPVS mode: a removed TCP real server keeps weight 0 until its connections end, at most this long. "
                    + "UDP and SCTP ones are removed at once. Default: ${DEFAULT-VALUE}.")
    long ipvsDrainSeconds;

    @Option(names = "--ipvs-exclude-cidrs", split = ",", paramLabel = "CIDR[,CIDR...]",
            description = "IPVS mode: virtual servers in these ranges belong to someone else (keepalived, ...); the agent never "
                    + "deletes them, as kube-proxy's flag of the same name. Default: none.")
    List<String> ipvsExcludeCidrs = new ArrayList<>();

    @Option(names = "--metrics-address", defaultValue = "0.0.0.0:9469", paramLabel = "HOST:PORT|off",
            description = "Serve /metrics (Prometheus) and /healthz here; 'off' serves nothing. Default: ${DEFAULT-VALUE}.")
    String metricsAddress;

    @Option(names = "--kafka-config", paramLabel = "FILE", defaultValue = "${env:RULESYNC_KAFKA_CONFIG}",
            description = "Kafka client settings (TLS, SASL) in Kafka's client.properties format. Default: $RULESYNC_KAFKA_CONFIG.")
    String kafkaConfig;

    @Option(names = "--kafka-property", paramLabel = "KEY=VALUE",
            description = "Extra Kafka client setting (TLS, SASL), repeatable, e.g. security.protocol=SSL.")
    List<String> kafkaProperties = new ArrayList<>();

    @Option(names = "--api", defaultValue = "http://localhost:8080", paramLabel = "URL",
            description = "The api role, for snapshots. Default: ${DEFAULT-VALUE}.")
    URI api;

    @Option(names = "--api-token", defaultValue = "${env:RULESYNC_API_TOKEN}",
            description = "Bearer token for the api. Default: $RULESYNC_API_TOKEN.")
    String apiToken;

    @Option(names = "--ip-families", split = ",", defaultValue = "ipv4,ipv6",
            description = "Families this node programs. Default: ${DEFAULT-VALUE}.")
    List<String> families;

    @Option(names = "--dry-run", paramLabel = "DIR",
            description = "Write the rules to DIR (NODE-ipv4.rules, NODE-ipv4.last-restore) instead of the kernel.")
    Path dryRun;

    @Option(names = "--netns", hidden = true, description = "Program this named network namespace instead (labs, tests).")
    String netns;

    @Option(names = "--state-dir",
            description = "Where the applied version is kept across restarts. Default: /var/lib/rulesync/agent, or the --dry-run DIR.")
    Path stateDir;

    @Option(names = "--verify-interval", defaultValue = "30", description = "Seconds between drift checks. Default: ${DEFAULT-VALUE}.")
    long verifySeconds;

    @Option(names = "--verify-chains", defaultValue = "200",
            description = "Owned chains read back per drift check (in turn). Default: ${DEFAULT-VALUE}.")
    int verifyChains;

    @Option(names = "--deltas-topic", defaultValue = "rulesync.rule-deltas", description = "Default: ${DEFAULT-VALUE}.")
    String deltasTopic;

    @Option(names = "--acks-topic", defaultValue = "rulesync.node-acks", description = "Default: ${DEFAULT-VALUE}.")
    String acksTopic;

    /** The configuration these options describe; throws IllegalArgumentException naming the bad option. */
    public AgentConfig config() {
        Map<String, Object> settings = new LinkedHashMap<>(KafkaClientConfig.load(kafkaConfig));
        for (String kv : kafkaProperties) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--kafka-property: '" + kv + "' is not KEY=VALUE");
            }
            settings.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        List<IpFamily> fams = new ArrayList<>();
        for (String f : families) {
            try {
                fams.add(IpFamily.fromId(f.trim()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--ip-families: '" + f + "' is not ipv4 or ipv6");
            }
        }
        List<Cidr> excluded = new ArrayList<>();
        for (String c : ipvsExcludeCidrs) {
            try {
                excluded.add(Cidr.parse(c.trim()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--ipvs-exclude-cidrs: " + e.getMessage());
            }
        }
        Topics defaults = Topics.DEFAULT;
        Topics topics = new Topics(defaults.events(), deltasTopic, defaults.deadLetters(), acksTopic);
        String token = apiToken == null || apiToken.isBlank() ? null : apiToken;
        // A dry run needs no privileges, so it keeps its state next to its rules.
        Path state = stateDir != null ? stateDir : dryRun != null ? dryRun : Path.of("/var/lib/rulesync/agent");
        return new AgentConfig(cluster, node, kafka, settings, topics, api, token, fams, dryRun, netns, state,
                Duration.ofSeconds(verifySeconds), verifyChains, ProxyMode.parse(mode), WhenIpvsUnavailable.parse(ipvsUnavailable),
                Duration.ofSeconds(ipvsDrainSeconds), excluded);
    }

    /** The metrics address, or null for 'off'. */
    InetSocketAddress metricsAddress() {
        if ("off".equals(metricsAddress)) {
            return null;
        }
        int colon = metricsAddress.lastIndexOf(':');
        try {
            int port = Integer.parseInt(metricsAddress.substring(colon + 1));
            if (colon <= 0 || port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(metricsAddress.substring(0, colon), port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--metrics-address: '" + metricsAddress + "' is not HOST:PORT or off");
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
        InetSocketAddress metricsAt;
        try {
            metricsAt = metricsAddress();
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return 2;
        }
        AgentLoop loop = config.loop(msg -> LOG.atInfo().addKeyValue("cluster", config.cluster()).addKeyValue("node", config.node())
                .log(msg)).start();
        MetricsServer metrics;
        try {
            metrics = metricsAt == null ? null
                    : MetricsServer.start(metricsAt, loop.agent(), config.cluster(), config.node(), () -> loop.died() == null);
        } catch (IOException e) {
            loop.close();
            System.err.println("--metrics-address " + metricsAddress + ": " + e.getMessage());
            return 2;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (metrics != null) {
                metrics.close();
            }
            loop.close();
            stopped.countDown();
        }, "agent-shutdown"));
        LOG.atInfo().addKeyValue("cluster", config.cluster()).addKeyValue("node", config.node()).log("agent started ({}), api {}, kafka {}",
                config.dryRun() == null ? "kernel" : "dry run into " + config.dryRun(), config.api(), config.kafka());
        stopped.await();
        return loop.died() == null ? 0 : 1;
    }
}
