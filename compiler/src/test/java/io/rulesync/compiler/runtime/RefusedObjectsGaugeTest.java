package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The compiler's gauge of refused objects follows the partitions the instance holds. */
class RefusedObjectsGaugeTest {
    @Test
    void setPerClusterAndRemovedWhenItsPartitionGoes() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CompilerMetrics metrics = new CompilerMetrics(registry);
        metrics.refusedObjects("shop", 2);
        metrics.refusedObjects("calm", 0);
        metrics.refusedObjects("shop", 3);
        assertThat(registry.get("rulesync.refused.objects")
                        .tag("cluster", "shop")
                        .gauge()
                        .value())
                .isEqualTo(3.0);
        metrics.forget(List.of("shop"));
        assertThat(registry.find("rulesync.refused.objects")
                        .tag("cluster", "shop")
                        .gauge())
                .isNull();
        assertThat(registry.get("rulesync.refused.objects")
                        .tag("cluster", "calm")
                        .gauge()
                        .value())
                .isZero();
        metrics.refusedObjects("shop", 1); // held again
        assertThat(registry.get("rulesync.refused.objects")
                        .tag("cluster", "shop")
                        .gauge()
                        .value())
                .isEqualTo(1.0);
        metrics.deadLettered(2);
        assertThat(registry.get("rulesync.dead.letters").counter().count()).isEqualTo(2.0);
    }
}
