package io.rulesync.api;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.access.Authentication;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.api.access.Credentials;
import io.rulesync.api.access.FailedAuthentications;
import io.rulesync.api.access.RateLimits;
import io.rulesync.api.access.WhoAmIController;
import io.rulesync.api.acks.AckConnection;
import io.rulesync.api.acks.AckMetrics;
import io.rulesync.api.acks.AckVersions;
import io.rulesync.api.acks.AckWriter;
import io.rulesync.api.acks.AcksController;
import io.rulesync.api.actions.ActionsController;
import io.rulesync.api.clusters.ClustersController;
import io.rulesync.api.deltas.DeltaWaits;
import io.rulesync.api.deltas.DeltasController;
import io.rulesync.api.deltas.HeadWatch;
import io.rulesync.api.errors.BodyLimits;
import io.rulesync.api.errors.DeclaredParameters;
import io.rulesync.api.errors.ProblemErrorController;
import io.rulesync.api.errors.ProblemReportValve;
import io.rulesync.api.events.EventsController;
import io.rulesync.api.history.HistoryController;
import io.rulesync.api.nodes.NodesController;
import io.rulesync.api.notify.Webhooks;
import io.rulesync.api.plan.PlanBases;
import io.rulesync.api.plan.PlanController;
import io.rulesync.api.problems.ProblemsController;
import io.rulesync.api.rollout.FleetPolicies;
import io.rulesync.api.rollout.RolloutController;
import io.rulesync.api.rollout.Rollouts;
import io.rulesync.api.snapshot.RecentVersions;
import io.rulesync.api.snapshot.SnapshotBodies;
import io.rulesync.api.snapshot.SnapshotController;
import io.rulesync.api.snapshot.Snapshots;
import io.rulesync.api.stream.NodeStreamConfiguration;
import io.rulesync.store.EventLog;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.NotificationStore;
import io.rulesync.store.Notifications;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.ProblemStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.SchemaCheck;
import io.rulesync.store.SecretFile;
import io.rulesync.store.StoreConfiguration;
import io.rulesync.store.VersionHistory;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.catalina.Lifecycle;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.boot.tomcat.TomcatContextCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.PropertySource;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The api service: HTTP over the versions the compiler stores in PostgreSQL. Beans are declared
 * here, not scanned; the stores come from {@link StoreConfiguration}, as the compiler's do.
 *
 * <p>The api validates the schema and does not migrate it: the compiler, which writes, migrates
 * ({@link #validateOnly()}, and the store module's README for why).
 *
 * <p>Every request but the health probes needs a bearer token ({@link BearerTokenFilter}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableConfigurationProperties(ApiProperties.class)
@PropertySource("classpath:io/rulesync/api/api-defaults.properties")
@Import({StoreConfiguration.class, NodeStreamConfiguration.class})
public class ApiApplication {

    /** In place of Flyway's migrate: a schema behind this api's migrations stops it at start, naming them. */
    @Bean
    FlywayMigrationStrategy validateOnly() {
        return SchemaCheck::require;
    }

    /** Shared by the snapshot and rules endpoints: 20 agents starting together cost one rebuild. */
    @Bean
    RecentVersions recentVersions(ApiProperties p) {
        return new RecentVersions(p.cachedVersions());
    }

    @Bean
    Snapshots snapshots(VersionHistory store, RecentVersions recent, Rollouts rollouts) {
        // Compressed once per version and node class: a fleet starting at once costs one compression (256 MB of gzip).
        return new Snapshots(store, recent, new SnapshotBodies(256L << 20), rollouts);
    }

    @Bean
    ClustersController clustersController(
            VersionHistory store, NodeStatusStore acks, ProblemStore problems, RolloutStore rollouts) {
        return new ClustersController(store, acks, problems, rollouts);
    }

    @Bean
    WhoAmIController whoAmIController() {
        return new WhoAmIController();
    }

    @Bean
    ProblemsController problemsController(ProblemStore problems) {
        return new ProblemsController(problems, Clock.systemUTC());
    }

    @Bean
    EventsController eventsController(VersionHistory store, EventLog events) {
        return new EventsController(store, events);
    }

    @Bean
    HistoryController historyController(VersionHistory store, RecentVersions recent, RolloutStore rollouts) {
        return new HistoryController(store, recent, rollouts);
    }

    /**
     * The folded state plans start from: a few clusters' kept, so a pull request's checks after the first cost the events
     * since, not a rebuild; dropped after ten idle minutes.
     */
    @Bean
    PlanBases planBases(EventLog events, VersionHistory store) {
        return new PlanBases(events, store, 4, Duration.ofMinutes(10));
    }

    @Bean
    PlanController planController(PlanBases bases, VersionHistory store, NodeStatusStore acks) {
        return new PlanController(bases, store, acks, Clock.systemUTC());
    }

    @Bean
    NodesController nodesController(VersionHistory store, NodeStatusStore acks) {
        return new NodesController(store, acks, Clock.systemUTC());
    }

    @Bean
    SnapshotController snapshotController(Snapshots snapshots, MeterRegistry meters) {
        return new SnapshotController(snapshots, meters);
    }

    /** The clusters' heads, read again whenever PostgreSQL announces a new version, and every second regardless. */
    @Bean
    HeadWatch headWatch(VersionHistory store, DataSource ds) {
        return new HeadWatch(store, new Notifications(ds, Notifications.HEADS), Duration.ofSeconds(1));
    }

    /** Where a new version's waiting agents get their answer made, off the watch's thread. */
    @Bean(destroyMethod = "shutdownNow")
    ExecutorService deltaWakers() {
        return Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "delta-wakers");
            t.setDaemon(true);
            t.setUncaughtExceptionHandler(
                    (th, e) -> LoggerFactory.getLogger(DeltaWaits.class).error("waking parked polls", e));
            return t;
        });
    }

    /** Staged rollouts: what each node is released, and the steps they take (the rollout package). */
    @Bean
    Rollouts rollouts(
            RolloutStore rollouts,
            VersionHistory store,
            NodeLabelStore labels,
            NodeStatusStore acks,
            OperatorActionStore actions,
            ApiProperties p,
            MeterRegistry meters) {
        Rollouts r = new Rollouts(rollouts, store, labels, acks, actions, p.eventsTopic(), Clock.systemUTC(), meters);
        if (p.fleet() != null) {
            // A policy the file gets wrong stops the api here, naming the cluster and field.
            r.declare(
                    FleetPolicies.read(Path.of(p.fleet())),
                    Path.of(p.fleet()).getFileName().toString());
        }
        return r;
    }

    /** Where rollouts step: every second (bakes end, acks arrive), and at once when a cluster's head moves. */
    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService rolloutTicks(Rollouts rollouts) {
        ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rollouts");
            t.setDaemon(true);
            return t;
        });
        ticks.scheduleWithFixedDelay(
                () -> {
                    try {
                        rollouts.tick();
                    } catch (RuntimeException e) {
                        LoggerFactory.getLogger(Rollouts.class)
                                .warn("rollout step: {}", e.toString()); // the database is down: next second
                    }
                },
                1,
                1,
                TimeUnit.SECONDS);
        return ticks;
    }

    @Bean
    DeltaWaits deltaWaits(
            VersionHistory store,
            HeadWatch watch,
            ExecutorService deltaWakers,
            MeterRegistry meters,
            Rollouts rollouts,
            ScheduledExecutorService rolloutTicks) {
        DeltaWaits waits = new DeltaWaits(store, watch, deltaWakers, 64L << 20, rollouts);
        Gauge.builder("rulesync.deltas.waiting", waits, DeltaWaits::parked)
                .description("nodes' requests and streams parked until their cluster's next version")
                .register(meters);
        rollouts.onRelease(waits::advanced);
        watch.start(new HeadWatch.Listener() {
            @Override
            public void advanced(String cluster, long head) {
                waits.advanced(cluster, head);
                if (rollouts.gated(cluster)) {
                    rolloutTicks.execute(
                            rollouts::tick); // a new version starts its rollout now, not at the next second
                }
            }

            @Override
            public void rewound(String cluster, long head) {
                waits.rewound(cluster, head);
            }
        });
        return waits;
    }

    @Bean
    RolloutController rolloutController(
            Rollouts rollouts, RolloutStore store, VersionHistory versions, NodeStatusStore acks) {
        return new RolloutController(rollouts, store, versions, acks, Clock.systemUTC());
    }

    /**
     * Before the web server's graceful shutdown (which waits for open requests), parked polls are answered: otherwise
     * each would hold the shutdown for up to its wait. A phase above the server's, so it stops first.
     */
    @Bean
    SmartLifecycle releaseParkedPolls(DeltaWaits waits) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                running = true;
            }

            @Override
            public void stop() {
                waits.stop();
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    @Bean
    DeltasController deltasController(DeltaWaits waits) {
        return new DeltasController(waits);
    }

    @Bean(destroyMethod = "close")
    AckConnection ackConnection(DataSource shared) throws SQLException {
        return new AckConnection(shared);
    }

    @Bean
    AckWriter ackWriter(AckConnection connection, MeterRegistry meters) {
        // The metrics read on the acks' connection too: a pool taken by queries must not hold the writer.
        return new AckWriter(connection.store(), new AckMetrics(meters, connection.events()), 2_000, meters);
    }

    @Bean
    AckVersions ackVersions(HeadWatch heads, AckConnection connection) {
        return new AckVersions(heads, connection.versions());
    }

    @Bean
    AcksController acksController(AckWriter writer, AckVersions versions, ExecutorService ackAnswers) {
        return new AcksController(writer, versions, ackAnswers);
    }

    /** Where stored acks' requests are answered (their asynchronous dispatch), off the writer's thread. */
    @Bean(destroyMethod = "shutdownNow")
    ExecutorService ackAnswers() {
        return Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "ack-answers");
            t.setDaemon(true);
            return t;
        });
    }

    @Bean
    ActionsController actionsController(
            VersionHistory store,
            OperatorActionStore actions,
            RolloutStore rollouts,
            NotificationStore notifications,
            ApiProperties p) {
        return new ActionsController(
                store,
                actions,
                rollouts,
                notifications,
                p.eventsTopic(),
                p.actionWait(),
                p.actionTimeout(),
                Clock.systemUTC());
    }

    /** Tells webhook receivers about rollouts, failing nodes and refused objects; prunes old notifications either way. */
    @Bean(initMethod = "start", destroyMethod = "close")
    Webhooks webhooks(NotificationStore notifications, ApiProperties p, MeterRegistry meters) {
        byte[] secret = null;
        if (p.webhookSecretFile() != null) {
            try {
                secret = SecretFile.read(Path.of(p.webhookSecretFile())).strip().getBytes(StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "--webhook-secret-file " + p.webhookSecretFile() + ": " + e.getMessage(), e);
            }
            if (secret.length < 16) {
                throw new IllegalArgumentException("--webhook-secret-file " + p.webhookSecretFile() + ": the secret is "
                        + secret.length + " bytes; give at least 16 (say, 'openssl rand -hex 32')");
            }
        }
        return new Webhooks(notifications, p.webhooks(), secret, Clock.systemUTC(), meters);
    }

    /**
     * The configured credentials: api tokens (the file's lines, then the inline ones) and node issuers. The api does not
     * start without a token. The files are read again every {@code credentials-check}: a revoked token is refused, and
     * its streams ended, within that much time.
     */
    @Bean
    Credentials credentials(ApiProperties p, MeterRegistry meters) throws IOException {
        Credentials c = new Credentials(
                p.tokensFile() == null || p.tokensFile().isBlank() ? null : Path.of(p.tokensFile()),
                p.tokens(),
                p.nodeIssuers() == null || p.nodeIssuers().isBlank() ? null : Path.of(p.nodeIssuers()),
                Clock.systemUTC(),
                meters);
        for (String name : c.tokens().unboundAgents()) {
            LoggerFactory.getLogger(ApiApplication.class)
                    .warn(
                            "api token '{}' (agent) is bound to no cluster: a node holding it can "
                                    + "read every cluster's rules, and acknowledge for none; give each node its own credential ('rulesync token "
                                    + "--role agent --cluster ID --node NAME', or its ServiceAccount token with --node-issuers)",
                            name);
        }
        return c;
    }

    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService credentialChecks(Credentials credentials, ApiProperties p) {
        ScheduledExecutorService checks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "credential-checks");
            t.setDaemon(true);
            return t;
        });
        long ms = p.credentialsCheck().toMillis();
        checks.scheduleWithFixedDelay(credentials::reload, ms, ms, TimeUnit.MILLISECONDS);
        return checks;
    }

    /** 1 while the api serves plain HTTP on a non-loopback address, as it was told to ({@code --insecure-http}). */
    @Bean
    Gauge insecureHttp(ApiProperties p, MeterRegistry meters) {
        return Gauge.builder("rulesync.api.insecure.http", () -> p.insecureHttp() ? 1 : 0)
                .description("1: the api serves plain HTTP on a non-loopback address (--insecure-http)")
                .register(meters);
    }

    /**
     * One authentication for the REST endpoints and the node streams: failed ones are logged at most once a minute per
     * remote address, with the count left out.
     */
    @Bean
    Authentication authentication(Credentials credentials, RateLimits limits, MeterRegistry meters) {
        return new Authentication(
                credentials,
                limits,
                new FailedAuthentications(Duration.ofMinutes(1), 10_000, Clock.systemUTC()),
                meters);
    }

    @Bean
    FilterRegistrationBean<BearerTokenFilter> bearerTokenFilter(Authentication authentication, RateLimits limits) {
        FilterRegistrationBean<BearerTokenFilter> r =
                new FilterRegistrationBean<>(new BearerTokenFilter(authentication, limits));
        r.addUrlPatterns("/*");
        // After BodyLimits: a body too big is refused before anything else is done for it.
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        return r;
    }

    @Bean
    RateLimits rateLimits(ApiProperties p, MeterRegistry meters) {
        return new RateLimits(p.writesPerSecond(), p.failedAuthenticationsPerMinute(), meters);
    }

    /** Request bodies are bounded before they are read ({@link BodyLimits}). */
    @Bean
    FilterRegistrationBean<BodyLimits> bodyLimits(MeterRegistry meters) {
        FilterRegistrationBean<BodyLimits> r = new FilterRegistrationBean<>(new BodyLimits(meters));
        r.addUrlPatterns("/*");
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return r;
    }

    /** The OpenAPI document's header: what this is, and that every operation takes a bearer token. */
    @Bean
    OpenAPI openApi() {
        return new OpenAPI()
                .info(new Info()
                        .title("rulesync api")
                        .version("v1")
                        .description("History, convergence, diffs and rollback "
                                + "of the service load-balancing rules of a fleet of Kubernetes clusters."))
                .components(new Components()
                        .addSecuritySchemes(
                                "bearer",
                                new SecurityScheme()
                                        .type(SecurityScheme.Type.HTTP)
                                        .scheme("bearer")
                                        .description("A token from 'rulesync token'; roles viewer, operator, agent")))
                .addSecurityItem(new SecurityRequirement().addList("bearer"))
                // Relative: the document is served by the api it describes, whatever address that has (and kept in the
                // repository the same whichever test wrote it).
                .servers(List.of(new io.swagger.v3.oas.models.servers.Server()
                        .url("/")
                        .description("the api serving this document")));
    }

    /** The document's answers: every problem an operation may give, and the 202s and 204s springdoc cannot see. */
    @Bean
    org.springdoc.core.customizers.OpenApiCustomizer problemAnswers() {
        return new ProblemAnswers();
    }

    @Bean
    ProblemResponses problemResponses() {
        return new ProblemResponses();
    }

    /** In place of Spring Boot's /error page, which answers JSON of its own shape (and 500 when asked directly). */
    @Bean
    ProblemErrorController problemErrorController() {
        return new ProblemErrorController();
    }

    /** Versions, names, modes... reach the controllers as values, or the request is refused naming the parameter. */
    @Bean
    WebMvcConfigurer parameterTypes() {
        return new ParameterTypes();
    }

    /** Query parameters no handler declares are refused, not ignored. */
    @Bean
    WebMvcConfigurer declaredParameters() {
        DeclaredParameters check = new DeclaredParameters();
        return new WebMvcConfigurer() {
            @Override
            public void addInterceptors(InterceptorRegistry registry) {
                registry.addInterceptor(check);
            }
        };
    }

    /**
     * Tomcat's own refusals (a malformed URL, headers too large) as problems: the host reports errors
     * with {@link ProblemReportValve}. The host installs its error report valve when it starts; Spring
     * Boot adds an HTML one of its own before that, which goes.
     */
    @Bean
    TomcatContextCustomizer problemReports() {
        return context -> {
            if (!(context.getParent() instanceof StandardHost host)) {
                throw new IllegalStateException(
                        "expected the api's context inside a Tomcat host, not " + context.getParent());
            }
            host.setErrorReportValveClass(ProblemReportValve.class.getName());
            host.addLifecycleListener(e -> {
                if (Lifecycle.BEFORE_START_EVENT.equals(e.getType())) {
                    for (Valve v : host.getPipeline().getValves()) {
                        if (v instanceof ErrorReportValve && !(v instanceof ProblemReportValve)) {
                            host.getPipeline().removeValve(v);
                        }
                    }
                }
            });
        };
    }
}
