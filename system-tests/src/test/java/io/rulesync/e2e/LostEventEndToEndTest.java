package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.publish.EventSink;
import io.rulesync.watcher.publish.KafkaEventSink;
import io.rulesync.watcher.resync.KafkaResyncRequests;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A lost event heals by itself: the real watcher (on a manifest folder) and the real compiler on a
 * real broker, with one event dropped on its way to Kafka. The watcher's next state digest disagrees
 * with what the compiler folded, the compiler asks for a resync on the resync topic, the watcher
 * republishes the cluster, and the edit that was lost becomes a version.
 */
@EndToEnd
@RequiresPostgres
@RequiresKafka
class LostEventEndToEndTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    /** Passes everything to Kafka except the one event it is armed to lose, which it reports delivered. */
    private static final class LossySink implements EventSink {
        private final EventSink kafka;
        final AtomicBoolean armed = new AtomicBoolean();
        final AtomicInteger lost = new AtomicInteger();

        LossySink(EventSink kafka) {
            this.kafka = kafka;
        }

        @Override
        public Delivery send(List<ClusterEvent> events) {
            List<ClusterEvent> kept = new ArrayList<>();
            for (ClusterEvent e : events) {
                if (e instanceof ObjectUpserted u
                        && u.ref().kind() == ObjectKind.ENDPOINT_SLICE
                        && armed.compareAndSet(true, false)) {
                    lost.incrementAndGet();
                } else {
                    kept.add(e);
                }
            }
            Delivery d = kafka.send(kept);
            if (kept.size() == events.size() || d.allDelivered()) {
                return kept.size() == events.size() ? d : Delivery.ok();
            }
            return Delivery.failedFrom(0, events.size(), d.error()); // the whole batch again; the loss stays lost
        }

        @Override
        public void close() {
            kafka.close();
        }
    }

    private static String rules(CompilerStores store) {
        long head = store.history().head("shop");
        return head == 0
                ? ""
                : store.history()
                        .rules("shop", head)
                        .ruleSet("node-a", IpFamily.IPV4)
                        .map(r -> r.render())
                        .orElse("");
    }

    @Test
    void aLostEditIsHealedByTheDigestAndTheResyncItTriggers() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
        Path web = dir.resolve("web.yaml");
        Files.writeString(web, ShopManifest.web("{addresses: [10.244.0.11], nodeName: node-a}"));
        Properties kafka = new Properties();
        kafka.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        LossySink sink = new LossySink(KafkaEventSink.create(kafka, topics.events()));
        FleetConfig fleet =
                FleetConfig.of(new ClusterSpec("shop", new ClusterSource.ManifestFolder(dir), ClusterSettings.DEFAULT));

        try (TestDatabase db = TestDatabase.create();
                ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run);
                Watcher watcher = Watcher.start(
                        fleet,
                        sink,
                        Watcher.Options.defaults()
                                .withDigestInterval(Duration.ofSeconds(1))
                                .withResyncs(new KafkaResyncRequests(kafka, topics.resyncs())))) {
            CompilerStores store = compiler.getBean(CompilerStores.class);
            await("the first version").atMost(DEADLINE).until(() -> rules(store).contains("10.244.0.11:8080"));
            await("the watcher to hear resync requests").atMost(DEADLINE).until(watcher::listeningForResyncs);
            long before = store.history().head("shop");

            sink.armed.set(true);
            Files.writeString(
                    web,
                    ShopManifest.web("{addresses: [10.244.0.11], nodeName: node-a}, "
                            + "{addresses: [10.244.0.12], nodeName: node-a}"));
            await("the edit to be lost").atMost(DEADLINE).until(() -> sink.lost.get() == 1);

            await("the lost edit to become a version")
                    .atMost(DEADLINE)
                    .until(() -> rules(store).contains("10.244.0.12:8080"));
            assertThat(store.history().head("shop")).isEqualTo(before + 1);
            assertThat(sink.lost.get()).isEqualTo(1);
        }
    }
}
