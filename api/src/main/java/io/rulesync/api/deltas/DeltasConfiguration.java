package io.rulesync.api.deltas;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.rollout.Rollouts;
import io.rulesync.store.Notifications;
import io.rulesync.store.VersionHistory;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.TaskScheduler;

/**
 * Nodes' deltas: the heads watched, the requests and streams parked until their next version, and the chain that
 * wakes them ({@link HeadFanout}).
 */
@Configuration(proxyBeanMethods = false)
public class DeltasConfiguration {
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

    @Bean
    DeltaWaits deltaWaits(
            VersionHistory store,
            HeadWatch watch,
            ExecutorService deltaWakers,
            MeterRegistry meters,
            Rollouts rollouts) {
        DeltaWaits waits = new DeltaWaits(store, watch, deltaWakers, 64L << 20, rollouts);
        Gauge.builder("rulesync.deltas.waiting", waits, DeltaWaits::parked)
                .description("nodes' requests and streams parked until their cluster's next version")
                .register(meters);
        return waits;
    }

    @Bean
    HeadFanout headFanout(HeadWatch heads, DeltaWaits waits, Rollouts rollouts, TaskScheduler taskScheduler) {
        return new HeadFanout(heads, waits, rollouts, taskScheduler);
    }

    @Bean
    DeltasController deltasController(DeltaWaits waits) {
        return new DeltasController(waits);
    }
}
