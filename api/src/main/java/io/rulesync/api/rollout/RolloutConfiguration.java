package io.rulesync.api.rollout;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.ApiProperties;
import io.rulesync.store.NodeLabelStore;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RolloutStore;
import io.rulesync.store.VersionHistory;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Staged rollouts: what each node is released, the steps they take every second (bakes end, acks arrive), and the
 * operators' endpoints. A step on a new version at once, when a cluster's head moves, is the deltas' chain's to ask
 * ({@code HeadFanout}).
 */
@Configuration(proxyBeanMethods = false)
public class RolloutConfiguration implements SchedulingConfigurer {
    private final ObjectProvider<Rollouts> rollouts;

    public RolloutConfiguration(ObjectProvider<Rollouts> rollouts) {
        this.rollouts = rollouts;
    }

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

    /** Every second, on Spring's scheduler; {@link Rollouts#tick} is one at a time whoever calls it. */
    @Override
    public void configureTasks(ScheduledTaskRegistrar tasks) {
        tasks.addFixedDelayTask(this::step, Duration.ofSeconds(1));
    }

    private void step() {
        try {
            rollouts.getObject().tick();
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(Rollouts.class)
                    .warn("rollout step: {}", e.toString()); // the database is down: next second
        }
    }

    @Bean
    RolloutController rolloutController(
            Rollouts rollouts, RolloutStore store, VersionHistory versions, NodeStatusStore acks) {
        return new RolloutController(rollouts, store, versions, acks, Clock.systemUTC());
    }
}
