package io.rulesync.api.acks;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.Batch;
import io.rulesync.store.EventLog;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

@RequiresPostgres
class AckMetricsTest {
    /**
     * The latency runs from the version's first observed event to the api storing the ack, both the control plane's
     * clocks: a node whose clock says the year 9999 does not move it.
     */
    @Test
    void appliesFailuresAndTheProgrammingLatencyByTheControlPlanesClocks() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            Instant observed = Instant.now().truncatedTo(ChronoUnit.MICROS).minusSeconds(3); // as PostgreSQL keeps it
            ClusterHead.Step step = ClusterHead.empty("shop")
                    .apply(List.of(
                            Fixtures.upsert("shop", Fixtures.node("n1", "10.1.0.1")),
                            Fixtures.upsert("shop", Fixtures.service("web", "10.96.0.10")),
                            Fixtures.upsert("shop", Fixtures.slice("web", "n1", "10.244.1.1"))));
            CompilerStores.on(db.dataSource())
                    .batches()
                    .commit(new Batch(
                            "fixture",
                            "events",
                            0,
                            -1,
                            1,
                            List.of(new Batch.EventRow(
                                    "shop", 0, "upsert", "EndpointSlice", "shop/web-1", "1", observed, "{}", 1L)),
                            List.of(),
                            List.of(new Batch.VersionRow("shop", 1, observed, "{\"test\":true}", "{}", step.diff())),
                            List.of(),
                            List.of()));
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            AckMetrics metrics = new AckMetrics(registry, new EventLog(db.dataSource()));
            Instant stored = observed.plusSeconds(2);
            Instant lying = Instant.parse("9999-01-01T00:00:00Z");

            metrics.stored(
                    List.of(
                            new NodeAck("shop", "n1", 1, 1, NodeAck.Status.APPLIED, null, 40, 13, "iptables", lying),
                            new NodeAck(
                                    "shop",
                                    "n2",
                                    1,
                                    0,
                                    NodeAck.Status.FAILED,
                                    "iptables-restore: exit 1",
                                    7,
                                    0,
                                    "iptables",
                                    lying)),
                    stored);

            assertThat(registry.get("rulesync.agent.apply.duration")
                            .tags("cluster", "shop", "status", "applied")
                            .timer()
                            .totalTime(TimeUnit.MILLISECONDS))
                    .isEqualTo(40);
            assertThat(registry.get("rulesync.agent.apply.duration")
                            .tags("cluster", "shop", "status", "failed")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("rulesync.agent.apply.failures")
                            .tags("cluster", "shop")
                            .counter()
                            .count())
                    .isEqualTo(1);
            var programming = registry.get("rulesync.network.programming.duration")
                    .tags("cluster", "shop")
                    .timer();
            assertThat(programming.count()).as("the APPLIED ack only").isEqualTo(1);
            assertThat(Duration.ofNanos((long) programming.totalTime(TimeUnit.NANOSECONDS)))
                    .isEqualTo(Duration.ofSeconds(2));
        }
    }
}
