package io.rulesync.api.acks;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.EventLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the nodes' acks say, for Prometheus, whichever way they reached the api: how long applies took (the agent's own
 * measure), how many failed, and the network programming latency, kube-proxy's
 * {@code network_programming_duration_seconds} for the whole fleet: from the earliest {@code observed_at} of the events
 * that made a version to the api storing a node's APPLIED ack of it. Both ends are the control plane's clocks; the
 * node's own {@code at} is not trusted with it.
 */
public final class AckMetrics {
    private static final Logger log = LoggerFactory.getLogger(AckMetrics.class);
    private static final Duration[] LATENCY_BUCKETS = {
        Duration.ofMillis(100),
        Duration.ofMillis(250),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofSeconds(2),
        Duration.ofSeconds(5),
        Duration.ofSeconds(10),
        Duration.ofSeconds(30),
        Duration.ofMinutes(1),
        Duration.ofMinutes(5)
    };

    /** A cluster's meters, looked up once: a thousand nodes ack each version. */
    private record Meters(Timer applied, Timer failed, Counter failures, Timer programming) {}

    private final MeterRegistry registry;
    private final EventLog events;
    private final Map<String, Meters> meters = new ConcurrentHashMap<>();
    /** When the first event of a (cluster, version) was observed: one query per version, whatever the nodes. */
    private final Cache<String, Optional<Instant>> observed =
            Caffeine.newBuilder().maximumSize(1024).build();

    public AckMetrics(MeterRegistry registry, EventLog events) {
        this.registry = registry;
        this.events = events;
    }

    /** Acks the api has just stored, at {@code stored} by its clock. */
    public void stored(List<NodeAck> acks, Instant stored) {
        for (NodeAck a : acks) {
            Meters m = meters.computeIfAbsent(a.cluster(), this::meters);
            if (a.status() == NodeAck.Status.FAILED) {
                m.failed().record(Duration.ofMillis(a.durationMs()));
                m.failures().increment();
                continue;
            }
            m.applied().record(Duration.ofMillis(a.durationMs()));
            Optional<Instant> first;
            try {
                first = observed.get(
                        a.cluster() + "\n" + a.version(), k -> events.firstObserved(a.cluster(), a.version()));
            } catch (RuntimeException e) {
                // A metric is not worth failing stored acks for: the next version's acks ask again.
                log.debug(
                        "reading when version {} of {} was first observed: {}",
                        a.version(),
                        a.cluster(),
                        e.getMessage());
                continue;
            }
            first.ifPresent(t -> m.programming()
                    .record(Duration.between(t, stored).isNegative() ? Duration.ZERO : Duration.between(t, stored)));
        }
    }

    private Meters meters(String cluster) {
        return new Meters(
                apply(cluster, "applied"),
                apply(cluster, "failed"),
                Counter.builder("rulesync.agent.apply.failures")
                        .description("Applies agents reported as failed")
                        .tag("cluster", cluster)
                        .register(registry),
                Timer.builder("rulesync.network.programming.duration")
                        .description(
                                "From the first change of a version observed to the api storing a node's ack that it applied it")
                        .tag("cluster", cluster)
                        .serviceLevelObjectives(LATENCY_BUCKETS)
                        .register(registry));
    }

    private Timer apply(String cluster, String status) {
        return Timer.builder("rulesync.agent.apply.duration")
                .description("How long agents took to validate and apply a version")
                .tags("cluster", cluster, "status", status)
                .publishPercentileHistogram()
                .register(registry);
    }
}
