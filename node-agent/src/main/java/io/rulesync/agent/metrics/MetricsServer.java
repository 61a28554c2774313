package io.rulesync.agent.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rulesync.agent.Agent;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The agent's own HTTP endpoints, on the JDK's server (the agent has no framework), on two
 * addresses as kube-proxy has them:
 * <ul>
 *   <li>{@code /metrics} (Prometheus: applies, apply time, failures, drift repairs, the running
 *       version), by default on 127.0.0.1 only: it needs no token, so it is not for the network
 *       unless the operator says so;</li>
 *   <li>{@code /healthz}, 200 once a version is applied and while the agent's loop lives, for
 *       probes and load balancers, by default on every interface.</li>
 * </ul>
 * The same address (and port) for both serves both on one listener.
 */
public final class MetricsServer implements AutoCloseable {
    private final HttpServer metrics;
    private final HttpServer healthz;

    private MetricsServer(HttpServer metrics, HttpServer healthz) {
        this.metrics = metrics;
        this.healthz = healthz;
    }

    /**
     * Serves {@code agent}'s metrics on {@code metricsAt} and its health on {@code healthzAt} (either
     * null: not served); {@code alive} says whether its loop still runs.
     */
    public static MetricsServer start(
            InetSocketAddress metricsAt,
            InetSocketAddress healthzAt,
            Agent agent,
            String cluster,
            String node,
            BooleanSupplier alive)
            throws IOException {
        HttpServer metrics = metricsAt == null ? null : HttpServer.create(metricsAt, 16);
        HttpServer healthz;
        try {
            // Port 0 asks for any free port: each such address gets one of its own.
            healthz = healthzAt == null
                    ? null
                    : healthzAt.getPort() != 0 && healthzAt.equals(metricsAt)
                            ? metrics
                            : HttpServer.create(healthzAt, 16);
        } catch (IOException e) {
            if (metrics != null) {
                metrics.stop(0);
            }
            throw new IOException(healthzAt + ": " + e.getMessage(), e);
        }
        if (metrics != null) {
            PrometheusMeterRegistry registry = registry(agent, cluster, node);
            metrics.createContext(
                    "/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        }
        if (healthz != null) {
            healthz.createContext("/healthz", ex -> {
                boolean ok = alive.getAsBoolean() && agent.running() > 0;
                reply(
                        ex,
                        ok ? 200 : 503,
                        "text/plain; charset=utf-8",
                        ok
                                ? "ok: running version " + agent.running() + "\n"
                                : (alive.getAsBoolean()
                                        ? "not ready: no version applied yet\n"
                                        : "the agent loop stopped\n"));
            });
        }
        if (metrics != null) {
            metrics.start();
        }
        if (healthz != null && healthz != metrics) {
            healthz.start();
        }
        return new MetricsServer(metrics, healthz);
    }

    private static PrometheusMeterRegistry registry(Agent agent, String cluster, String node) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Tags tags = Tags.of("cluster", cluster, "node", node);
        FunctionCounter.builder("rulesync.agent.applies", agent, Agent::applies)
                .description("Versions applied")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder("rulesync.agent.apply.failures", agent, Agent::failures)
                .description("Versions refused or failed to apply (the node kept its rules)")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder("rulesync.agent.drift.repairs", agent, Agent::repairs)
                .description("Chains found changed behind the agent's back and rewritten")
                .tags(tags)
                .register(registry);
        FunctionTimer.builder(
                        "rulesync.agent.apply.duration",
                        agent,
                        Agent::applies,
                        Agent::applyMillis,
                        TimeUnit.MILLISECONDS)
                .description("Time spent applying versions, validation included")
                .tags(tags)
                .register(registry);
        Gauge.builder("rulesync.agent.running.version", agent, Agent::running)
                .description("The version the kernel holds (-1: none)")
                .tags(tags)
                .register(registry);
        Gauge.builder("rulesync.agent.ipvs.draining.real.servers", agent, Agent::draining)
                .description("IPVS mode: removed TCP real servers at weight 0, waiting for their connections to end")
                .tags(tags)
                .register(registry);
        return registry;
    }

    /** The port /metrics is served on (-1: not served). */
    public int metricsPort() {
        return metrics == null ? -1 : metrics.getAddress().getPort();
    }

    /** The port /healthz is served on (-1: not served). */
    public int healthzPort() {
        return healthz == null ? -1 : healthz.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        if (metrics != null) {
            metrics.stop(0);
        }
        if (healthz != null && healthz != metrics) {
            healthz.stop(0);
        }
    }
}
