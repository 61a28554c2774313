package io.rulesync.agent;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.IptablesNetfilter;
import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.feed.AckSink;
import io.rulesync.agent.feed.ApiSnapshots;
import io.rulesync.agent.feed.DeltaFeed;
import io.rulesync.agent.feed.KafkaAckSink;
import io.rulesync.agent.feed.SnapshotSource;
import io.rulesync.agent.ipvs.BoundAddresses;
import io.rulesync.agent.ipvs.IpsetSync;
import io.rulesync.agent.ipvs.IpvsApplier;
import io.rulesync.agent.ipvs.IpvsadmKernel;
import io.rulesync.agent.mode.IpvsProbe;
import io.rulesync.agent.mode.ModeChoice;
import io.rulesync.agent.mode.ModeChoice.WhenIpvsUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.rules.RuleGrammar;
import io.rulesync.agent.state.StateFile;
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
import java.util.function.Consumer;

/**
 * Everything a node agent needs to run, and how the parts are put together.
 *
 * @param kafka          bootstrap servers
 * @param kafkaSettings  extra client settings (TLS, SASL), never from code
 * @param api            base URL of the api role, for snapshots
 * @param dryRun         null: program the kernel; else write rules to this directory
 * @param netns          null: the agent's own network namespace; else one named by {@code ip netns}
 * @param mode           what to program; IPVS is checked at start (see {@link #modeChoice})
 * @param whenIpvsUnavailable fall back to iptables mode, or refuse to apply anything
 * @param ipvsDrainTimeout how long a removed TCP real server drains at most in IPVS mode
 * @param ipvsExcludeCidrs IPVS mode: virtual servers in these ranges are someone else's and never deleted
 */
public record AgentConfig(String cluster, String node, String kafka, Map<String, Object> kafkaSettings, Topics topics,
        URI api, String apiToken, List<IpFamily> families, Path dryRun, String netns, Path stateDir,
        Duration verifyEvery, int chainsPerCheck, ProxyMode mode, WhenIpvsUnavailable whenIpvsUnavailable, Duration ipvsDrainTimeout,
        List<Cidr> ipvsExcludeCidrs) {

    /** With IPVS's default drain timeout, and no virtual servers of anyone else. */
    public AgentConfig(String cluster, String node, String kafka, Map<String, Object> kafkaSettings, Topics topics,
            URI api, String apiToken, List<IpFamily> families, Path dryRun, String netns, Path stateDir,
            Duration verifyEvery, int chainsPerCheck, ProxyMode mode, WhenIpvsUnavailable whenIpvsUnavailable) {
        this(cluster, node, kafka, kafkaSettings, topics, api, apiToken, families, dryRun, netns, stateDir, verifyEvery,
                chainsPerCheck, mode, whenIpvsUnavailable, IpvsPlan.DEFAULT_DRAIN_TIMEOUT, List.of());
    }

    /** iptables mode. */
    public AgentConfig(String cluster, String node, String kafka, Map<String, Object> kafkaSettings, Topics topics,
            URI api, String apiToken, List<IpFamily> families, Path dryRun, String netns, Path stateDir,
            Duration verifyEvery, int chainsPerCheck) {
        this(cluster, node, kafka, kafkaSettings, topics, api, apiToken, families, dryRun, netns, stateDir, verifyEvery,
                chainsPerCheck, ProxyMode.IPTABLES, WhenIpvsUnavailable.FALLBACK);
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
        Objects.requireNonNull(whenIpvsUnavailable, "whenIpvsUnavailable");
        ipvsExcludeCidrs = List.copyOf(ipvsExcludeCidrs);
        if (ipvsDrainTimeout.isNegative()) {
            throw new IllegalArgumentException("--ipvs-drain-timeout: " + ipvsDrainTimeout + " is negative");
        }
    }

    /**
     * The mode this agent runs in: for IPVS mode, the node is checked first (as kube-proxy does), and
     * what cannot be used falls back or is refused as configured.
     */
    public ModeChoice modeChoice() {
        if (mode == ProxyMode.IPTABLES) {
            return ModeChoice.AS_ASKED;
        }
        Optional<String> problem = dryRun != null ? Optional.of("a dry run writes iptables rules only")
                : IpvsProbe.problem(netns);
        return ModeChoice.decide(mode, problem, whenIpvsUnavailable);
    }

    /** The agent itself, without its Kafka feed: what {@link #loop} drives (and tests drive directly). */
    public Agent agent(SnapshotSource snapshots, AckSink acks, Consumer<String> log) {
        ModeChoice choice = modeChoice();
        if (choice.note() != null) {
            log.accept(mode.id() + " mode asked for, " + choice.note() + "; "
                    + (choice.refusal() == null ? "programming iptables mode instead (--ipvs-unavailable=fallback)"
                            : "applying nothing (--ipvs-unavailable=refuse)"));
        }
        List<Netfilter> netfilters = netfilters();
        Applier applier = new Applier(netfilters, log, choice.note());
        Agent agent = new Agent(cluster, node, snapshots, applier, acks, new StateFile(stateDir, cluster, node),
                Clock.systemUTC(), verifyEvery, chainsPerCheck, new Conntrack(netns, dryRun != null, log), log);
        if (choice.refusal() != null) {
            agent.refuseEverything(choice.refusal());
        } else if (mode == ProxyMode.IPVS && choice.note() == null) {
            agent.programIpvs(new IpvsApplier(netfilters, new IpvsadmKernel(netns), new IpsetSync(netns), new BoundAddresses(netns),
                    ipvsDrainTimeout, ipvsExcludeCidrs, log));
        }
        return agent;
    }

    /** The agent's packet filters: the kernel's, or in-memory ones that write files for a dry run. */
    public List<Netfilter> netfilters() {
        IptablesNetfilter.Printer printer = (family, table, chain, rule) -> RuleGrammar.parse(table, family, chain, rule).kernelForm();
        List<Netfilter> out = new ArrayList<>();
        for (IpFamily f : families) {
            out.add(dryRun != null ? new MemoryNetfilter(f, dryRun, node + "-" + f.id())
                    : new IptablesNetfilter(f, netns, printer));
        }
        return out;
    }

    public AgentLoop loop(Consumer<String> log) {
        return loop(new ApiSnapshots(api, apiToken), log);
    }

    public AgentLoop loop(SnapshotSource snapshots, Consumer<String> log) {
        KafkaAckSink acks = new KafkaAckSink(kafka, kafkaSettings, topics.acks(), log);
        Agent agent = agent(snapshots, acks, log);
        DeltaFeed feed = new DeltaFeed(kafka, kafkaSettings, topics.deltas(), cluster, log);
        return new AgentLoop(agent, feed, node, log, acks);
    }
}
