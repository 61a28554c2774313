package io.rulesync.watcher.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The watcher's metrics endpoint, on the JDK's HTTP server (the watcher has no framework, like the
 * agent): Prometheus text at {@code /metrics}, see {@code Watcher#bindMetrics}.
 */
public final class MetricsServer implements AutoCloseable {
    private final HttpServer server;

    private MetricsServer(HttpServer server) {
        this.server = server;
    }

    /** Serves {@code registry} at {@code /metrics} on {@code address}. */
    public static MetricsServer start(InetSocketAddress address, PrometheusMeterRegistry registry) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        server.createContext("/metrics", ex -> reply(ex, registry.scrape()));
        server.start();
        return new MetricsServer(server);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        ex.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
