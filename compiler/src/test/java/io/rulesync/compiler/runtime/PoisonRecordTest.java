package io.rulesync.compiler.runtime;

import static io.rulesync.compiler.runtime.ShopCluster.CLUSTER;
import static io.rulesync.compiler.runtime.ShopCluster.runs;
import static io.rulesync.compiler.runtime.ShopCluster.up;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A record the compiler fails on every time (simulated: a fault injected where each record is read, as a compiler bug
 * that one object triggers would fail): its batch is retried a bounded number of times, then taken apart; the record is
 * set aside as a dead letter with the reason, and the edits around it, in the same batch, are stored.
 */
@RequiresPostgres
@RequiresKafka
@ExtendWith(OutputCaptureExtension.class)
class PoisonRecordTest {
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);

    /** Fails on any record that carries the Service named "poison". */
    private static final PartitionProcessor.Faults BUG = new PartitionProcessor.Faults() {
        @Override
        public void at(PartitionProcessor.Point point) {}

        @Override
        public void reading(PartitionProcessor.Record r) {
            if (r.value().contains("poison")) {
                throw new IllegalStateException("a compiler bug this object triggers");
            }
        }
    };

    @Test
    void aRecordThatAlwaysFailsIsQuarantinedAndTheRestOfItsBatchIsStored(CapturedOutput log) throws Exception {
        try (TestDatabase db = TestDatabase.create();
                ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run, Map.of(), BUG);
                ShopCluster shop = new ShopCluster(topics.events())) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            MeterRegistry meters = compiler.getBean(MeterRegistry.class);
            shop.start();
            await("a version").atMost(Duration.ofSeconds(60)).until(() -> runs(store, "10.244.0.1:8080"));
            long head = store.history().head(CLUSTER);

            // An edit, the poison, an edit: sent together, so that the poison fails a batch holding the others.
            shop.send(
                    up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")),
                    up(Fixtures.service("poison", "10.96.0.66")),
                    up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2", "10.244.0.3")));
            await("the edits after the poison stored")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> runs(store, "10.244.0.3:8080"));

            JdbcClient sql = JdbcClient.create(db.dataSource());
            List<String> reasons = sql.sql("SELECT reason FROM dead_letter")
                    .query(String.class)
                    .list();
            assertThat(reasons)
                    .singleElement()
                    .asString()
                    .isEqualTo("the compiler failed on this record (java.lang.IllegalStateException: "
                            + "a compiler bug this object triggers); quarantined so that the partition goes on");
            assertThat(sql.sql("SELECT payload FROM dead_letter")
                            .query(String.class)
                            .single())
                    .contains("poison");
            assertThat(meters.get("rulesync.events.quarantined").counter().count())
                    .isEqualTo(1);
            assertThat(meters.get("rulesync.batches.failed").counter().count())
                    .as("whole-batch attempts before taking it apart")
                    .isEqualTo(PoisonGuard.ATTEMPTS - 1);
            assertThat(db.count("cluster_event"))
                    .as("the four, and the two edits; not the poison")
                    .isEqualTo(6);
            assertThat(runs(store, "10.96.0.66"))
                    .as("no rule of the poison's Service")
                    .isFalse();
            assertThat(store.history().head(CLUSTER)).isGreaterThan(head);
            assertThat(log.getAll()
                            .lines()
                            .filter(l -> l.contains(" ERROR ") && l.contains("quarantined as a dead letter")))
                    .singleElement()
                    .asString()
                    .contains("record at offset 5 (key shop)");
        }
    }
}
