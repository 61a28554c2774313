package io.rulesync.compiler.runtime;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rulesync.store.EventLog;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.RulesDiff;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The compiler's Prometheus metrics: events consumed, compile duration, versions produced and their
 * size, and, from the agents' acks, apply durations, apply failures and the network programming
 * latency (the first event of a version observed → a node acknowledging it applied), kube-proxy's
 * {@code network_programming_duration_seconds} for the whole fleet; per cluster, the problems the
 * compiler found in its state ({@code rulesync.cluster.problems}). Also the objects each cluster's
 * watcher refused (as the partitions this instance holds say) and the records refused as dead letters.
 */
public final class CompilerMetrics implements PartitionProcessor.Observer {
    private static final Duration[] LATENCY_BUCKETS = {Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
        Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
        Duration.ofMinutes(1), Duration.ofMinutes(5)};
    private static final int OBSERVED_CACHE = 1024;
    private static final String REFUSED = "rulesync.refused.objects";

    private final MeterRegistry registry;
    private final EventLog events;
    private final Counter consumed;
    private final Timer compile;
    private final Map<String, AtomicInteger> problemCounts = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> refused = new ConcurrentHashMap<>();
    /** When the first event of a (cluster, version) was observed: many nodes ack the same version. */
    private final Cache<String, Optional<Instant>> observed = Caffeine.newBuilder().maximumSize(OBSERVED_CACHE).build();

    public CompilerMetrics(MeterRegistry registry, EventLog events) {
        this.registry = registry;
        this.events = events;
        this.consumed = Counter.builder("rulesync.events.consumed").description("Records read from the events topic")
                .register(registry);
        this.compile = Timer.builder("rulesync.compile.duration").description("Processing one polled batch of one partition: "
                + "fold, compile, diff and the PostgreSQL transaction").publishPercentileHistogram().register(registry);
    }

    public void consumed(int records) {
        consumed.increment(records);
    }

    public void compiled(Duration took) {
        compile.record(took);
    }

    /** A version was stored (not a {@link PartitionProcessor.VersionListener} bean: those are the embedder's). */
    public void stored(String cluster, long seq, RulesDiff diff) {
        Counter.builder("rulesync.versions.produced").tag("cluster", cluster).register(registry).increment();
        DistributionSummary.builder("rulesync.delta.fragments").description("Rule fragments a version added, changed or removed")
                .tag("cluster", cluster).register(registry).record(diff.fragments().size());
    }

    /** What a retention pass removed ({@link RetentionSweep}), by what: versions, events, fragments, dead letters. */
    public void retentionRemoved(String what, long n) {
        if (n > 0) {
            Counter.builder("rulesync.retention.removed").description("Rows retention removed from the history")
                    .tag("what", what).register(registry).increment(n);
        }
    }

    @Override
    public void digestChecked(String cluster, boolean agrees) {
        Counter.builder("rulesync.state.digests").description("Watchers' state digests checked against what was folded")
                .tags("cluster", cluster, "result", agrees ? "agrees" : "differs").register(registry).increment();
    }

    @Override
    public void resyncRequested(String cluster) {
        Counter.builder("rulesync.resyncs.requested").description("Watchers asked to publish a cluster's whole state again")
                .tag("cluster", cluster).register(registry).increment();
    }

    @Override
    public void admissionProblemsChanged(String cluster, List<io.rulesync.model.manifest.Problem> problems) {
        problems(cluster).set(problems.size());
    }

    /** One gauge per cluster, registered when the cluster is first seen; the registry keeps only a weak reference. */
    private AtomicInteger problems(String cluster) {
        return problemCounts.computeIfAbsent(cluster, c -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder("rulesync.cluster.problems", n, AtomicInteger::get)
                    .description("What a cluster's folded state holds that the API server would have refused or that is left out of "
                            + "the rules: Services claiming a ClusterIP or NodePort another Service holds, special load-balancer IPs")
                    .tag("cluster", c).register(registry);
            return n;
        });
    }

    @Override
    public void positionReset(int partition) {
        Counter.builder("rulesync.events.position.resets").description("Stored positions that did not belong to the live "
                + "events log (replaced, truncated, or past by retention) and were reset").register(registry).increment();
    }

    @Override
    public void refusedObjects(String cluster, int count) {
        refused.computeIfAbsent(cluster, c -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder(REFUSED, n, AtomicInteger::get)
                    .description("Objects (and unreadable manifest files) the cluster's watcher refused, as reported to this compiler")
                    .tag("cluster", c).register(registry);
            return n;
        }).set(count);
    }

    /** Clusters of a partition this instance no longer holds: another instance reports them now. */
    public void forget(Collection<String> clusters) {
        for (String c : clusters) {
            if (refused.remove(c) != null) {
                Gauge g = registry.find(REFUSED).tag("cluster", c).gauge();
                if (g != null) {
                    registry.remove(g);
                }
            }
        }
    }

    @Override
    public void deadLettered(int count) {
        Counter.builder("rulesync.dead.letters").description("Records of the events topic refused as dead letters")
                .register(registry).increment(count);
    }

    /** Operator actions that expired before a compiler carried them out. */
    public void actionsExpired(int n) {
        Counter.builder("rulesync.operator.actions.expired").description("Operator actions not carried out in time")
                .register(registry).increment(n);
    }

    /** Acks as they are recorded. */
    public void acked(List<NodeAck> acks) {
        for (NodeAck a : acks) {
            String status = a.status().name().toLowerCase(java.util.Locale.ROOT);
            Timer.builder("rulesync.agent.apply.duration").description("How long agents took to validate and apply a version")
                    .tags("cluster", a.cluster(), "status", status).publishPercentileHistogram().register(registry)
                    .record(Duration.ofMillis(a.durationMs()));
            if (a.status() == NodeAck.Status.FAILED) {
                Counter.builder("rulesync.agent.apply.failures").tag("cluster", a.cluster()).register(registry).increment();
            } else {
                firstObserved(a.cluster(), a.version()).ifPresent(t -> Timer.builder("rulesync.network.programming.duration")
                        .description("From the first change of a version observed to a node acknowledging it applied")
                        .tag("cluster", a.cluster()).serviceLevelObjectives(LATENCY_BUCKETS).register(registry)
                        .record(Duration.between(t, a.at()).isNegative() ? Duration.ZERO : Duration.between(t, a.at())));
            }
        }
    }

    /** One store read per (cluster, version): concurrent acks of it wait for the first one's. */
    private Optional<Instant> firstObserved(String cluster, long version) {
        return observed.get(cluster + "\n" + version, k -> events.firstObserved(cluster, version));
    }
}
