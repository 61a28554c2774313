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
 * The agent's own HTTP endpoint, on the JDK's server (the agent has no framework): Prometheus
 * metrics at {@code /metrics} (applies, apply time, failures, drift repairs, the running version)
 * and {@code /healthz}, 200 once a version is applied and while the agent's loop lives, as
 * kube-proxy's healthz port does for load balancers and probes.
 */
public final class MetricsServer implements AutoCloseable {
    private final HttpServer server;

    private MetricsServer(HttpServer server) {
        this.server = server;
    }

    /** Serves {@code agent}'s metrics on {@code address}; {@code alive} says whether its loop still runs. */
    public static MetricsServer start(InetSocketAddress address, Agent agent, String cluster, String node, BooleanSupplier alive)
            throws IOException {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Tags tags = Tags.of("cluster", cluster, "node", node);
        FunctionCounter.builder("rulesync.agent.applies", agent, Agent::applies).description("Versions applied").tags(tags)
                .register(registry);
        FunctionCounter.builder("rulesync.agent.apply.failures", agent, Agent::failures)
                .description("Versions refused or failed to apply (the node kept its rules)").tags(tags).register(registry);
        FunctionCounter.builder("rulesync.agent.drift.repairs", agent, Agent::repairs)
                .description("Chains found changed behind the agent's back and rewritten").tags(tags).register(registry);
        FunctionTimer.builder("rulesync.agent.apply.duration", agent, Agent::applies, Agent::applyMillis, TimeUnit.MILLISECONDS)
                .description("Time spent applying versions, validation included").tags(tags).register(registry);
        Gauge.builder("rulesync.agent.running.version", agent, Agent::running).description("The version the kernel holds (-1: none)")
                .tags(tags).register(registry);
        Gauge.builder("rulesync.agent.ipvs.draining.real.servers", agent, Agent::draining)
                .description("IPVS mode: removed TCP real servers at weight 0, waiting for their connections to end").tags(tags)
                .register(registry);

        HttpServer server = HttpServer.create(address, 16);
        server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.createContext("/healthz", ex -> {
            boolean ok = alive.getAsBoolean() && agent.running() > 0;
            reply(ex, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok: running version " + agent.running() + "\n"
                    : (alive.getAsBoolean() ? "not ready: no version applied yet\n" : "the agent loop stopped\n"));
        });
        server.start();
        return new MetricsServer(server);
    }

    public int port() {
        return server.getAddress().getPort();
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
        server.stop(0);
    }
}
