package io.rulesync.compiler.runtime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rulesync.model.rules.RulesDiff;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The compiler's Prometheus metrics: events consumed, compile duration, versions produced and their
 * size (what the nodes' acks say is the api's, {@code AckMetrics}); per cluster, the problems the
 * compiler found in its state ({@code rulesync.cluster.problems}). Also the objects each cluster's
 * watcher refused (as the partitions this instance holds say) and the records refused as dead letters.
 */
public final class CompilerMetrics implements PartitionProcessor.Observer {
    private static final String REFUSED = "rulesync.refused.objects";

    private final MeterRegistry registry;
    private final Counter consumed;
    private final Timer compile;
    private final Counter batchesFailed;
    private final Counter writerFenced;
    private final Counter quarantined;
    private final AtomicInteger standingBy = new AtomicInteger();
    private final Map<String, AtomicInteger> problemCounts = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> refused = new ConcurrentHashMap<>();

    public CompilerMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.consumed = Counter.builder("rulesync.events.consumed")
                .description("Records read from the events topic")
                .register(registry);
        this.batchesFailed = Counter.builder("rulesync.batches.failed")
                .description("Batches of events that could not be committed and were retried from their first record")
                .register(registry);
        this.writerFenced = Counter.builder("rulesync.compiler.writer.fenced")
                .description(
                        "Times this compiler found that another compiler had taken a partition it wrote, and stopped writing it")
                .register(registry);
        this.quarantined = Counter.builder("rulesync.events.quarantined")
                .description(
                        "Records that failed their batch again and again, and on their own, and were set aside as dead letters "
                                + "so that their partition goes on")
                .register(registry);
        Gauge.builder("rulesync.compiler.partitions.standing.by", standingBy, AtomicInteger::get)
                .description(
                        "Partitions Kafka gave this compiler that another compiler (another consumer group) writes: "
                                + "two compiler deployments share one database")
                .register(registry);
        this.compile = Timer.builder("rulesync.compile.duration")
                .description("Processing one polled batch of one partition: "
                        + "fold, compile, diff and the PostgreSQL transaction")
                .publishPercentileHistogram()
                .register(registry);
    }

    public void consumed(int records) {
        consumed.increment(records);
    }

    public void compiled(Duration took) {
        compile.record(took);
    }

    /** A batch of events that could not be committed, to be retried ({@link BatchFailures}). */
    public void batchFailed() {
        batchesFailed.increment();
    }

    /** This compiler found a partition it wrote taken by another compiler, and stood down. */
    public void writerFenced() {
        writerFenced.increment();
    }

    /** A record was set aside as a dead letter after it failed on its own ({@link PoisonGuard}). */
    public void quarantined() {
        quarantined.increment();
    }

    /** How many of this compiler's assigned partitions another compiler writes now. */
    public void standingBy(int partitions) {
        standingBy.set(partitions);
    }

    /** A version was stored (not a {@link PartitionProcessor.VersionListener} bean: those are the embedder's). */
    public void stored(String cluster, long seq, RulesDiff diff) {
        Counter.builder("rulesync.versions.produced")
                .description("versions stored, by cluster")
                .tag("cluster", cluster)
                .register(registry)
                .increment();
        DistributionSummary.builder("rulesync.delta.fragments")
                .description("Rule fragments a version added, changed or removed")
                .tag("cluster", cluster)
                .register(registry)
                .record(diff.fragments().size());
    }

    /** What a retention pass removed ({@link RetentionSweep}), by what: versions, events, fragments, dead letters. */
    public void retentionRemoved(String what, long n) {
        if (n > 0) {
            Counter.builder("rulesync.retention.removed")
                    .description("Rows retention removed from the history")
                    .tag("what", what)
                    .register(registry)
                    .increment(n);
        }
    }

    @Override
    public void digestChecked(String cluster, boolean agrees) {
        Counter.builder("rulesync.state.digests")
                .description("Watchers' state digests checked against what was folded")
                .tags("cluster", cluster, "result", agrees ? "agrees" : "differs")
                .register(registry)
                .increment();
    }

    @Override
    public void resyncRequested(String cluster) {
        Counter.builder("rulesync.resyncs.requested")
                .description("Watchers asked to publish a cluster's whole state again")
                .tag("cluster", cluster)
                .register(registry)
                .increment();
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
                    .description(
                            "What a cluster's folded state holds that the API server would have refused or that is left out of "
                                    + "the rules: Services claiming a ClusterIP or NodePort another Service holds, special load-balancer IPs")
                    .tag("cluster", c)
                    .register(registry);
            return n;
        });
    }

    @Override
    public void positionReset(int partition) {
        Counter.builder("rulesync.events.position.resets")
                .description("Stored positions that did not belong to the live "
                        + "events log (replaced, truncated, or past by retention) and were reset")
                .register(registry)
                .increment();
    }

    @Override
    public void refusedObjects(String cluster, int count) {
        refused.computeIfAbsent(cluster, c -> {
                    AtomicInteger n = new AtomicInteger();
                    Gauge.builder(REFUSED, n, AtomicInteger::get)
                            .description(
                                    "Objects (and unreadable manifest files) the cluster's watcher refused, as reported to this compiler")
                            .tag("cluster", c)
                            .register(registry);
                    return n;
                })
                .set(count);
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
        Counter.builder("rulesync.dead.letters")
                .description("Records of the events topic refused as dead letters")
                .register(registry)
                .increment(count);
    }

    /** Operator actions that expired before a compiler carried them out. */
    public void actionsExpired(int n) {
        Counter.builder("rulesync.operator.actions.expired")
                .description("Operator actions not carried out in time")
                .register(registry)
                .increment(n);
    }
}
