package io.rulesync.agent;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.AckSink;
import io.rulesync.agent.feed.ApiAcks;
import io.rulesync.agent.feed.ApiDeltas;
import io.rulesync.agent.feed.ApiSnapshots;
import io.rulesync.agent.feed.DeltaFeed;
import io.rulesync.agent.feed.DeltaSource;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.feed.StreamFeed;
import io.rulesync.agent.feed.Transport;
import io.rulesync.agent.ipvs.BoundAddresses;
import io.rulesync.agent.ipvs.IpsetSync;
import io.rulesync.agent.ipvs.IpvsApplier;
import io.rulesync.agent.ipvs.IpvsadmKernel;
import io.rulesync.agent.mode.IptablesMode;
import io.rulesync.agent.mode.IpvsMode;
import io.rulesync.agent.mode.IpvsProbe;
import io.rulesync.agent.mode.KernelMode;
import io.rulesync.agent.mode.ModeChoice;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.NftProbe;
import io.rulesync.agent.mode.NftablesMode;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.agent.mode.RefusingMode;
import io.rulesync.agent.nftables.NftCommand;
import io.rulesync.agent.nftables.NftFiles;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.state.StateFile;
import io.rulesync.client.ApiClient;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.client.tls.TrustRoots;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.topic.Topics;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a node agent needs to run, and how the parts are put together.
 *
 * @param kafka          bootstrap servers (used with {@link Transport#KAFKA} only)
 * @param kafkaSettings  extra client settings (TLS, SASL), never from code
 * @param api            base URL of the api role: snapshots, and with {@link Transport#API} deltas and acks
 * @param dryRun         null: program the kernel; else write rules to this directory
 * @param netns          null: the agent's own network namespace; else one named by {@code ip netns}
 * @param mode           what to program; IPVS is checked at start (see {@link #modeChoice})
 * @param whenUnavailable fall back to iptables mode, or refuse to apply anything
 * @param ipvsDrainTimeout how long a removed TCP real server drains at most in IPVS mode
 * @param ipvsExcludeCidrs IPVS mode: virtual servers in these ranges are someone else's and never deleted
 * @param transport      deltas and acks on a stream to the api, through its REST endpoints, or through Kafka
 * @param ackInterval    with the api, the least time between two ack requests (zero: one as soon as the last is answered)
 * @param stream         with {@link Transport#STREAM}: the api replicas' stream addresses, {@code host:port[,host:port]} or a
 *                       gRPC target; null: the api's host, port {@value #DEFAULT_STREAM_PORT}
 * @param tokens         where the api token is read before each request and stream (a {@code TokenFile}: a renewed
 *                       ServiceAccount token is taken without a restart); null: {@code apiToken}
 * @param tls            the roots the api's certificate is verified by; null: the runtime's for an {@code https} api, and
 *                       plain text for an {@code http} one (only an api on a loopback address, or told so, takes it)
 */
public record AgentConfig(
        String cluster,
        String node,
        String kafka,
        Map<String, Object> kafkaSettings,
        Topics topics,
        URI api,
        String apiToken,
        List<IpFamily> families,
        Path dryRun,
        String netns,
        Path stateDir,
        Duration verifyEvery,
        int chainsPerCheck,
        ProxyMode mode,
        WhenUnavailable whenUnavailable,
        Duration ipvsDrainTimeout,
        List<Cidr> ipvsExcludeCidrs,
        Transport transport,
        Duration ackInterval,
        String stream,
        Supplier<String> tokens,
        TrustRoots tls) {
    /** The api's stream port unless told otherwise. */
    public static final int DEFAULT_STREAM_PORT = 8081;

    private static final Logger log = LoggerFactory.getLogger(AgentConfig.class);

    /** With the token as given, and TLS as the api's URL says. */
    public AgentConfig(
            String cluster,
            String node,
            String kafka,
            Map<String, Object> kafkaSettings,
            Topics topics,
            URI api,
            String apiToken,
            List<IpFamily> families,
            Path dryRun,
            String netns,
            Path stateDir,
            Duration verifyEvery,
            int chainsPerCheck,
            ProxyMode mode,
            WhenUnavailable whenUnavailable,
            Duration ipvsDrainTimeout,
            List<Cidr> ipvsExcludeCidrs,
            Transport transport,
            Duration ackInterval,
            String stream) {
        this(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                mode,
                whenUnavailable,
                ipvsDrainTimeout,
                ipvsExcludeCidrs,
                transport,
                ackInterval,
                stream,
                null,
                null);
    }

    /** With IPVS's default drain timeout, no virtual servers of anyone else, deltas and acks through the api. */
    public AgentConfig(
            String cluster,
            String node,
            String kafka,
            Map<String, Object> kafkaSettings,
            Topics topics,
            URI api,
            String apiToken,
            List<IpFamily> families,
            Path dryRun,
            String netns,
            Path stateDir,
            Duration verifyEvery,
            int chainsPerCheck,
            ProxyMode mode,
            WhenUnavailable whenUnavailable) {
        this(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                mode,
                whenUnavailable,
                IpvsPlan.DEFAULT_DRAIN_TIMEOUT,
                List.of(),
                Transport.API,
                Duration.ZERO,
                null);
    }

    /** iptables mode, deltas and acks through the api. */
    public AgentConfig(
            String cluster,
            String node,
            String kafka,
            Map<String, Object> kafkaSettings,
            Topics topics,
            URI api,
            String apiToken,
            List<IpFamily> families,
            Path dryRun,
            String netns,
            Path stateDir,
            Duration verifyEvery,
            int chainsPerCheck) {
        this(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                ProxyMode.IPTABLES,
                WhenUnavailable.FALLBACK);
    }

    public AgentConfig {
        Objects.requireNonNull(cluster, "cluster");
        String bad = KubernetesNames.checkSubdomain(node);
        if (bad != null) {
            throw new IllegalArgumentException("--node: " + bad);
        }
        Objects.requireNonNull(kafka, "kafka");
        kafkaSettings = Map.copyOf(kafkaSettings);
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(api, "api");
        families = List.copyOf(families);
        Objects.requireNonNull(stateDir, "stateDir");
        Objects.requireNonNull(verifyEvery, "verifyEvery");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(whenUnavailable, "whenUnavailable");
        ipvsExcludeCidrs = List.copyOf(ipvsExcludeCidrs);
        Objects.requireNonNull(transport, "transport");
        if (ackInterval.isNegative()) {
            throw new IllegalArgumentException("--ack-interval: " + ackInterval + " is negative");
        }
        if (ipvsDrainTimeout.isNegative()) {
            throw new IllegalArgumentException("--ipvs-drain-timeout: " + ipvsDrainTimeout + " is negative");
        }
        if (tokens == null) {
            String given = apiToken;
            tokens = () -> given;
        }
        if (tls == null && "https".equalsIgnoreCase(api.getScheme())) {
            tls = TrustRoots.system();
        }
    }

    /** The api's REST endpoints, with this configuration's token and roots. */
    public ApiClient apiClient() {
        return new ApiClient(api, tokens, tls == null ? ApiClient.newHttpClient() : ApiClient.newHttpClient(tls));
    }

    /**
     * The mode this agent runs in: for IPVS mode, the node is checked first (as kube-proxy does), and
     * what cannot be used falls back or is refused as configured.
     */
    public ModeChoice modeChoice(CommandRunner runner) {
        if (mode == ProxyMode.IPTABLES) {
            return ModeChoice.AS_ASKED;
        }
        Optional<String> problem;
        if (mode == ProxyMode.IPVS) {
            problem = dryRun != null ? Optional.of("a dry run writes iptables rules only") : IpvsProbe.problem(runner);
        } else {
            problem = dryRun != null ? Optional.empty() : NftProbe.problem(runner); // a dry run writes nftables files
        }
        return ModeChoice.decide(mode, problem, whenUnavailable);
    }

    /** The agent itself, on this host's kernel (in the named network namespace, if any) and the system clock. */
    public Agent agent(SnapshotSource snapshots, AckSink acks) {
        return agent(snapshots, acks, HostCommand.PROCESSES.inNetns(netns), netns, Clock.systemUTC());
    }

    /**
     * The agent itself, without its feed: what {@link #loop} drives (and tests drive directly).
     * Its kernel mode is chosen here, once: iptables, IPVS, or refusing to apply anything. Every kernel change goes
     * through {@code runner}; nftables mode writes no netlink messages, whose socket would be in this process's
     * namespace, not necessarily the runner's.
     */
    public Agent agent(SnapshotSource snapshots, AckSink acks, CommandRunner runner, Clock clock) {
        return agent(snapshots, acks, kernel(runner, clock, false, null), clock);
    }

    /**
     * The same, where {@code runner} works in network namespace {@code runnerNetns} (null: this process's): nftables
     * mode may then write netlink messages in that namespace too.
     */
    public Agent agent(SnapshotSource snapshots, AckSink acks, CommandRunner runner, String runnerNetns, Clock clock) {
        return agent(snapshots, acks, kernel(runner, clock, true, runnerNetns), clock);
    }

    private Agent agent(SnapshotSource snapshots, AckSink acks, KernelMode kernel, Clock clock) {
        return new Agent(
                cluster, node, snapshots, kernel, acks, new StateFile(stateDir, cluster, node), clock, verifyEvery);
    }

    /** The kernel mode this configuration asks for, checked against the node: iptables, IPVS, or refusing to apply anything. */
    private KernelMode kernel(CommandRunner runner, Clock clock, boolean netlink, String netlinkNetns) {
        ModeChoice choice = modeChoice(runner);
        if (choice.note() != null) {
            log.atWarn()
                    .addKeyValue("cluster", cluster)
                    .addKeyValue("node", node)
                    .log(
                            "{} mode asked for, {}; {}",
                            mode.id(),
                            choice.note(),
                            choice.refusal() == null
                                    ? "programming iptables mode instead (--mode-unavailable=fallback)"
                                    : "applying nothing (--mode-unavailable=refuse)");
        }
        List<Netfilter> netfilters = netfilters(runner);
        Conntrack conntrack = new Conntrack(runner, dryRun != null);
        KernelMode iptables = new IptablesMode(
                node, new Applier(netfilters, choice.note(), clock), conntrack, verifyEvery, chainsPerCheck);
        KernelMode kernel;
        if (choice.refusal() != null) {
            kernel = new RefusingMode(choice.refusal(), iptables);
        } else if (mode == ProxyMode.IPVS && choice.note() == null) {
            kernel = new IpvsMode(
                    node,
                    new IpvsApplier(
                            netfilters,
                            new IpvsadmKernel(runner),
                            new IpsetSync(runner),
                            new BoundAddresses(runner),
                            ipvsDrainTimeout,
                            ipvsExcludeCidrs),
                    conntrack,
                    clock);
        } else if (mode == ProxyMode.NFTABLES && choice.note() == null) {
            kernel = new NftablesMode(
                    node,
                    dryRun != null ? new NftFiles(dryRun, node) : new NftCommand(runner, netlinkNetns, netlink),
                    families,
                    conntrack,
                    dryRun != null ? List.of() : netfilters,
                    clock);
        } else {
            kernel = iptables;
        }
        if (dryRun == null && choice.refusal() == null && !(kernel instanceof NftablesMode)) {
            // A node that leaves nftables mode: its table would still answer (before iptables mode's rules, at equal
            // priority).
            int removed = NftCommand.deleteTables(runner, families);
            if (removed > 0) {
                log.atInfo()
                        .addKeyValue("cluster", cluster)
                        .addKeyValue("node", node)
                        .log("removed {} kube-proxy nftables tables nftables mode had left", removed);
            }
        }
        return kernel;
    }

    /** The agent's packet filters: the kernel's, or in-memory ones that write files for a dry run. */
    public List<Netfilter> netfilters(CommandRunner runner) {
        IptablesNetfilter.Printer printer = IptablesNetfilter.Printer.KERNEL_FORM;
        List<Netfilter> out = new ArrayList<>();
        for (IpFamily f : families) {
            out.add(
                    dryRun != null
                            ? new MemoryNetfilter(f, dryRun, node + "-" + f.id())
                            : new IptablesNetfilter(f, runner, printer));
        }
        return out;
    }

    /** The same configuration, reaching the control plane through {@code t}. */
    public AgentConfig withTransport(Transport t) {
        return new AgentConfig(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                mode,
                whenUnavailable,
                ipvsDrainTimeout,
                ipvsExcludeCidrs,
                t,
                ackInterval,
                stream,
                tokens,
                tls);
    }

    /** The same configuration, sending acks to the api at most once per {@code interval}. */
    public AgentConfig withAckInterval(Duration interval) {
        return new AgentConfig(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                mode,
                whenUnavailable,
                ipvsDrainTimeout,
                ipvsExcludeCidrs,
                transport,
                interval,
                stream,
                tokens,
                tls);
    }

    /** The same configuration, on a stream to the api replicas at {@code target} ({@code host:port[,host:port]}). */
    public AgentConfig withStream(String target) {
        return new AgentConfig(
                cluster,
                node,
                kafka,
                kafkaSettings,
                topics,
                api,
                apiToken,
                families,
                dryRun,
                netns,
                stateDir,
                verifyEvery,
                chainsPerCheck,
                mode,
                whenUnavailable,
                ipvsDrainTimeout,
                ipvsExcludeCidrs,
                Transport.STREAM,
                ackInterval,
                target,
                tokens,
                tls);
    }

    /** Where the api's node streams are: as configured, else the api's host on the default port. */
    public String streamTarget() {
        return stream != null
                ? stream
                : (api.getHost().contains(":") ? "[" + api.getHost() + "]" : api.getHost()) + ":" + DEFAULT_STREAM_PORT;
    }

    /** The agent with its deltas and acks. */
    public AgentLoop loop() {
        return loop(ack -> {});
    }

    /** @param observer also told every ack, after it is queued for the control plane: what a console shows of the versions applied */
    public AgentLoop loop(AckSink observer) {
        ApiClient connection = apiClient();
        return loop(connection, new ApiSnapshots(connection), observer);
    }

    /**
     * The agent with its host tools run by {@code runner} (in this configuration's namespace, if any): a lab node whose
     * {@code iptables-restore} is a test's wrapper on its PATH.
     */
    public AgentLoop loop(CommandRunner runner) {
        ApiClient connection = apiClient();
        return loop(
                connection,
                new ApiSnapshots(connection),
                kernel(runner.inNetns(netns), Clock.systemUTC(), false, null),
                ack -> {});
    }

    public AgentLoop loop(ApiClient connection, SnapshotSource snapshots, AckSink observer) {
        return loop(
                connection,
                snapshots,
                kernel(HostCommand.PROCESSES.inNetns(netns), Clock.systemUTC(), true, netns),
                observer);
    }

    /**
     * The agent on {@code kernel} (the benchmarks' hollow agents give theirs), with its feed and acks by this
     * configuration's transport: a watch and POSTs to the api over {@code connection}, or the Kafka topics.
     */
    public AgentLoop loop(ApiClient connection, SnapshotSource snapshots, KernelMode kernel, AckSink observer) {
        Clock clock = Clock.systemUTC();
        if (transport == Transport.STREAM) {
            // The stream asks the agent what it runs, and the agent sends its acks on the stream: made in that order.
            AtomicReference<Agent> self = new AtomicReference<>();
            String target = streamTarget();
            StreamFeed stream = new StreamFeed(
                    () -> NodeStream.channel(target, tls, null, false, 0),
                    true,
                    cluster,
                    node,
                    connection.tokens(),
                    () -> self.get() == null ? -1 : self.get().running(),
                    () -> self.get() == null ? "" : self.get().runningLineage(),
                    ackInterval,
                    clock);
            Agent agent = new Agent(
                    cluster,
                    node,
                    snapshots,
                    kernel,
                    ack -> {
                        stream.publish(ack);
                        observer.publish(ack);
                    },
                    new StateFile(stateDir, cluster, node),
                    clock,
                    verifyEvery);
            self.set(agent);
            return new AgentLoop(agent, stream, node, stream);
        }
        // Over Kafka too, acks go to the api with the node's own credential: a Kafka principal is shared by the agents,
        // and the api takes an ack for a node only from that node.
        AckSink sink = new ApiAcks(connection, ackInterval);
        Agent agent = new Agent(
                cluster,
                node,
                snapshots,
                kernel,
                ack -> {
                    sink.publish(ack);
                    observer.publish(ack);
                },
                new StateFile(stateDir, cluster, node),
                clock,
                verifyEvery);
        DeltaSource feed = transport == Transport.API
                ? new ApiDeltas(
                        connection, cluster, node, agent::running, agent::runningLineage, ApiDeltas.DEFAULT_HOLD, clock)
                : new DeltaFeed(kafka, kafkaSettings, topics.deltas(), cluster, clock);
        return new AgentLoop(agent, feed, node, sink);
    }
}
