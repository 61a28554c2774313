package io.rulesync.api.cli;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.notify.Webhooks;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.store.DatabaseOptions;
import io.rulesync.store.DurationConverter;
import java.net.InetAddress;
import java.net.UnknownHostException;
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
        description =
                "Serve the stored versions over HTTP under /api/v1 (clusters, versions, rules, diffs, snapshots, "
                        + "nodes, events, rollback/resume, audit); OpenAPI at /v3/api-docs, health and Prometheus under /actuator.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class ApiCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ApiCommand.class);

    @Option(
            names = "--port",
            defaultValue = "8080",
            description = "HTTP port (0: any free one). Default: ${DEFAULT-VALUE}.")
    private int port;

    @Option(
            names = "--address",
            defaultValue = "0.0.0.0",
            description = "The address the api and its node streams listen on. " + "Default: ${DEFAULT-VALUE}.")
    private String address;

    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            description = "The api's certificate chain (PEM). With --tls-key, the api "
                    + "serves HTTPS and its node streams TLS, and takes a renewed certificate when the files change.")
    private Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "The private key of --tls-cert (PEM, PKCS#8).")
    private Path tlsKey;

    @Option(
            names = "--insecure-http",
            description =
                    "Serve plain HTTP on a non-loopback address: tokens and rules travel in "
                            + "clear text. Without TLS, the api refuses to start on any address but a loopback one unless told this.")
    private boolean insecureHttp;

    @Option(
            names = "--node-issuers",
            paramLabel = "FILE",
            description =
                    "Clusters whose nodes prove who they are with their "
                            + "ServiceAccount token: one 'CLUSTER ISSUER JWKS-FILE [NAMESPACE:SERVICEACCOUNT]' per line (see deploy/README.md).")
    private Path nodeIssuers;

    @Option(
            names = "--stream-port",
            defaultValue = "8081",
            description = "Port of node streams, the agents' gRPC (0: any free one). Default: ${DEFAULT-VALUE}.")
    private int streamPort;

    @Option(
            names = "--max-streams",
            defaultValue = "20000",
            description =
                    "The most node streams this replica holds; beyond, nodes are refused and try again (on another "
                            + "replica where there is one). Default: ${DEFAULT-VALUE}.")
    private int maxStreams;

    @Option(
            names = "--tokens-file",
            defaultValue = "${env:RULESYNC_API_TOKENS_FILE}",
            description = "API tokens, one 'NAME ROLE sha256:HEX' per line (make them with 'rulesync token'). "
                    + "Default: $RULESYNC_API_TOKENS_FILE.")
    private String tokensFile;

    @Option(
            names = "--events-topic",
            defaultValue = "rulesync.cluster-events",
            description =
                    "The compiler's events topic, where rollback and resume requests go. Default: ${DEFAULT-VALUE}.")
    private String eventsTopic;

    @Option(
            names = "--action-timeout",
            defaultValue = "5m",
            converter = DurationConverter.class,
            description =
                    "How long a rollback or resume may stay pending before it expires and no longer blocks the cluster's "
                            + "next action; give the compiler the same. Default: ${DEFAULT-VALUE}.")
    private Duration actionTimeout;

    @Option(
            names = "--fleet",
            description = "A fleet file: the rollout policies its clusters declare ('rollout:') are applied "
                    + "when the api starts.")
    private String fleet;

    @Option(
            names = "--webhook",
            paramLabel = "URL",
            description = "Tell this URL (a JSON POST that Slack-style and generic "
                    + "receivers take) when a rollout starts, halts, rolls back or completes, a node fails a version, or objects are "
                    + "refused; https, or http to a loopback address. Repeatable.")
    private List<String> webhooks = new ArrayList<>();

    @Option(
            names = "--webhook-secret-file",
            paramLabel = "FILE",
            description =
                    "A secret of at least 16 bytes: each webhook's "
                            + "body is signed with it (HMAC-SHA256, header X-Rulesync-Signature: t=SECONDS,v1=HEX of SECONDS.BODY).")
    private String webhookSecretFile;

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
        props.put("server.address", address);
        props.putAll(transport());
        if (nodeIssuers != null) {
            props.put("rulesync.api.node-issuers", nodeIssuers.toString());
        }
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
        for (int i = 0; i < webhooks.size(); i++) {
            props.put("rulesync.api.webhooks[" + i + "]", webhooks.get(i));
        }
        if (webhookSecretFile != null) {
            props.put("rulesync.api.webhook-secret-file", webhookSecretFile);
        }
        props.put("rulesync.api.action-timeout", actionTimeout.toMillis() + "ms");
        if (fleet != null) {
            props.put("rulesync.api.fleet", fleet);
        }
        props.put("spring.main.banner-mode", "off");
        ConfigurableApplicationContext app = new SpringApplicationBuilder(ApiApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(props)
                .registerShutdownHook(shutdownHook)
                .run();
        log.info(
                "api serving on port {}, node streams on port {}",
                app.getEnvironment().getProperty("local.server.port"),
                app.getBean(NodeStreamServer.class).port());
        return app;
    }

    /**
     * TLS from the certificate files (Spring reloads them when they change; so do the node streams), or plain HTTP where
     * that is allowed: on a loopback address, or when told {@code --insecure-http}, which the api then says loudly.
     */
    Map<String, Object> transport() {
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        Map<String, Object> props = new LinkedHashMap<>();
        if (tlsCert != null) {
            if (insecureHttp) {
                throw new IllegalArgumentException("--insecure-http with --tls-cert: choose one");
            }
            String bundle = "spring.ssl.bundle.pem.api.";
            props.put(bundle + "keystore.certificate", "file:" + tlsCert.toAbsolutePath());
            props.put(bundle + "keystore.private-key", "file:" + tlsKey.toAbsolutePath());
            props.put(bundle + "reload-on-update", true);
            props.put("spring.ssl.bundle.watch.file.quiet-period", "1s");
            props.put("server.ssl.bundle", "api");
            props.put("rulesync.api.tls-cert", tlsCert.toAbsolutePath().toString());
            props.put("rulesync.api.tls-key", tlsKey.toAbsolutePath().toString());
            return props;
        }
        boolean loopback;
        try {
            loopback = InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--address " + address + ": " + e.getMessage(), e);
        }
        if (!loopback && !insecureHttp) {
            throw new IllegalArgumentException(
                    "the api would serve plain HTTP on " + address + ", where tokens and rules travel in "
                            + "clear text: give --tls-cert and --tls-key, or --address 127.0.0.1, or --insecure-http to accept it");
        }
        if (!loopback) {
            log.warn(
                    "serving PLAIN HTTP on {} (--insecure-http): bearer tokens and rules travel in clear text",
                    address);
            props.put("rulesync.api.insecure-http", true);
        }
        return props;
    }

    @Override
    public Integer call() throws InterruptedException {
        for (String w : webhooks) {
            try {
                Webhooks.checked(w);
            } catch (IllegalArgumentException e) {
                System.err.println("--webhook: " + e.getMessage());
                return 2;
            }
        }
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
