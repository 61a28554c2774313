package io.rulesync.api.cli;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.store.DatabaseOptions;
import io.rulesync.store.DurationConverter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code rulesync api}: the HTTP api over the compiler's PostgreSQL. */
@Command(
        name = "api",
        description = "Serve the stored versions over HTTP under /api/v1 (clusters, versions, rules, diffs, snapshots, "
                + "nodes, events, rollback/resume, audit); OpenAPI at /v3/api-docs, health and Prometheus under /actuator.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class ApiCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ApiCommand.class);

    @Option(names = "--port", defaultValue = "8080", description = "HTTP port (0: any free one). Default: ${DEFAULT-VALUE}.")
    private int port;

    @Option(names = "--stream-port", defaultValue = "8081",
            description = "Port of node streams, the agents' gRPC (0: any free one). Default: ${DEFAULT-VALUE}.")
    private int streamPort;

    @Option(names = "--max-streams", defaultValue = "20000",
            description = "The most node streams this replica holds; beyond, nodes are refused and try again (on another "
                    + "replica where there is one). Default: ${DEFAULT-VALUE}.")
    private int maxStreams;

    @Option(names = "--tokens-file", defaultValue = "${env:RULESYNC_API_TOKENS_FILE}",
            description = "API tokens, one 'NAME ROLE sha256:HEX' per line (make them with 'rulesync token'). "
                    + "Default: $RULESYNC_API_TOKENS_FILE.")
    private String tokensFile;

    @Option(names = "--events-topic", defaultValue = "rulesync.cluster-events",
            description = "The compiler's events topic, where rollback and resume requests go. Default: ${DEFAULT-VALUE}.")
    private String eventsTopic;

    @Option(names = "--action-timeout", defaultValue = "5m", converter = DurationConverter.class,
            description = "How long a rollback or resume may stay pending before it expires and no longer blocks the cluster's "
                    + "next action; give the compiler the same. Default: ${DEFAULT-VALUE}.")
    private Duration actionTimeout;

    @Option(names = "--fleet", description = "A fleet file: the rollout policies its clusters declare ('rollout:') are applied "
            + "when the api starts.")
    private String fleet;

    @Mixin
    private DatabaseOptions db;

    /** Token lines given directly (the demo's generated tokens), besides or instead of --tokens-file. */
    private final List<String> tokens = new ArrayList<>();
    private boolean shutdownHook = true;

    public ApiCommand withTokens(List<String> lines) {
        tokens.addAll(lines);
        return this;
    }

    /** The database password, given in process (the demo): no command line shows it. */
    public ApiCommand withDatabasePassword(String password) {
        db.usePassword(password);
        return this;
    }

    /**
     * The caller stops the api (closing the context), not the JVM's shutdown: the demo stops its agents first, which
     * would otherwise poll an api that Ctrl-C already closed.
     */
    public ApiCommand withoutShutdownHook() {
        shutdownHook = false;
        return this;
    }

    /** Starts the api and returns once it serves; closing the context stops it. */
    public ConfigurableApplicationContext start() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("server.port", port);
        props.put("rulesync.api.stream-port", streamPort);
        props.put("rulesync.api.max-streams", maxStreams);
        props.putAll(db.springProperties());
        if (tokensFile != null && !tokensFile.isBlank()) {
            props.put("rulesync.api.tokens-file", tokensFile);
        }
        if (!tokens.isEmpty()) {
            props.put("rulesync.api.tokens", String.join(",", tokens));
        }
        props.put("rulesync.api.events-topic", eventsTopic);
        props.put("rulesync.api.action-timeout", actionTimeout.toMillis() + "ms");
        if (fleet != null) {
            props.put("rulesync.api.fleet", fleet);
        }
        props.put("spring.main.banner-mode", "off");
        ConfigurableApplicationContext app = new SpringApplicationBuilder(ApiApplication.class)
                .web(WebApplicationType.SERVLET).properties(props).registerShutdownHook(shutdownHook).run();
        log.info("api serving on port {}, node streams on port {}", app.getEnvironment().getProperty("local.server.port"),
                app.getBean(NodeStreamServer.class).port());
        return app;
    }

    @Override
    public Integer call() throws InterruptedException {
        ConfigurableApplicationContext app = start();
        CountDownLatch closed = new CountDownLatch(1);
        app.addApplicationListener(e -> {
            if (e instanceof ContextClosedEvent) {
                closed.countDown();
            }
        });
        closed.await(); // until SIGTERM/SIGINT closes the context through Spring's shutdown hook
        return 0;
    }
}
