package io.rulesync.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.access.AccessConfiguration;
import io.rulesync.api.access.BearerTokenFilter;
import io.rulesync.api.acks.AcksConfiguration;
import io.rulesync.api.actions.ActionsController;
import io.rulesync.api.clusters.ClustersController;
import io.rulesync.api.deltas.DeltasConfiguration;
import io.rulesync.api.errors.ErrorsConfiguration;
import io.rulesync.api.events.EventsController;
import io.rulesync.api.history.HistoryController;
import io.rulesync.api.nodes.NodesController;
import io.rulesync.api.notify.Webhooks;
import io.rulesync.api.plan.PlanBases;
import io.rulesync.api.plan.PlanController;
import io.rulesync.api.problems.ProblemsController;
import io.rulesync.api.rollout.RolloutConfiguration;
import io.rulesync.api.rollout.Rollouts;
import io.rulesync.api.snapshot.RecentVersions;
import io.rulesync.api.snapshot.SnapshotBodies;
import io.rulesync.api.snapshot.SnapshotController;
import io.rulesync.api.snapshot.Snapshots;
import io.rulesync.api.stream.NodeStreamConfiguration;
import io.rulesync.store.EventLog;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.NotificationStore;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.PropertySource;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The api service: HTTP over the versions the compiler stores in PostgreSQL. Beans are declared,
 * not scanned: the read endpoints here, each feature's in its package's configuration (access, errors,
 * rollout, deltas, acks, node streams), the stores in {@link StoreConfiguration}, as the compiler's are.
 * Periodic work (rollout steps, credential checks, stream sweeps) runs on Spring's scheduler.
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
@EnableScheduling
@Import({
    StoreConfiguration.class,
    AccessConfiguration.class,
    ErrorsConfiguration.class,
    RolloutConfiguration.class,
    DeltasConfiguration.class,
    AcksConfiguration.class,
    NodeStreamConfiguration.class
})
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

    /** Versions, names, modes... reach the controllers as values, or the request is refused naming the parameter. */
    @Bean
    WebMvcConfigurer parameterTypes() {
        return new ParameterTypes();
    }
}
