package io.rulesync.watcher.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka outage with the real producer: the watcher starts while Kafka is not there (a closed local
 * port), keeps watching and conflating while sends fail, and once its producer factory points at a
 * running broker, the current state arrives, followed by a republish of everything.
 */
@RequiresKafka
class KafkaOutageTest {
    /** Generous: CI machines are slow, and no test asserts on time. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private static String closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    private static List<Integer> ports(List<ClusterEvent> events, String key) {
        List<Integer> out = new ArrayList<>();
        for (ClusterEvent e : events) {
            if (e instanceof ObjectUpserted u && u.ref().key().equals(key)) {
                out.add(((Service) u.object()).ports().get(0).port());
            }
        }
        return out;
    }

    @Test
    void theCurrentStateArrivesOnceKafkaIsThere() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo"));
        Path web = folder.resolve("web.yaml");
        Files.writeString(
                web,
                "kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}");
        Files.writeString(
                folder.resolve("db.yaml"),
                "kind: Service\nmetadata: {name: db, namespace: shop}\nspec: {ports: [{port: 5432}]}");
        String topic = KafkaTestBroker.newTopic("outage");
        AtomicReference<String> bootstrap = new AtomicReference<>(closedPort());
        KafkaEventSink sink = new KafkaEventSink(
                () -> {
                    Properties p = new Properties();
                    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.get());
                    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "1000");
                    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
                    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "3000");
                    return new KafkaProducer<>(KafkaEventSink.producerConfig(p));
                },
                topic);
        Watcher.Options options = Watcher.Options.defaults()
                .withPublisher(new Publisher.Options(500, Duration.ofMillis(100), Duration.ofMillis(500)));
        try (Watcher watcher = Watcher.start(
                FleetConfig.of(
                        new ClusterSpec("demo", new ClusterSource.ManifestFolder(folder), ClusterSettings.DEFAULT)),
                sink,
                options)) {
            await("a failed send")
                    .atMost(DEADLINE)
                    .until(() ->
                            !watcher.stats().kafkaAvailable() && watcher.stats().failedSends() > 0);

            // Changes while Kafka is away: each key keeps only its latest state.
            for (int port = 81; port <= 85; port++) {
                Files.writeString(
                        web,
                        "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                                + "spec: {clusterIP: 10.96.0.1, ports: [{port: " + port + "}]}");
                int expected = port;
                await("the edit to " + expected)
                        .atMost(DEADLINE)
                        .until(() -> watcher.feed("demo")
                                .get(ObjectKind.SERVICE, "shop/web")
                                .map(s -> ((Service) s).ports().get(0).port() == expected)
                                .orElse(false));
            }
            Files.delete(folder.resolve("db.yaml"));
            await("the deletion of db")
                    .atMost(DEADLINE)
                    .until(() -> watcher.feed("demo").keys(ObjectKind.SERVICE).size() == 1);
            // No backlog: seven slots (the listing's start, settings, web, db, three markers), each with at most one
            // event queued and one in the batch that is failing.
            assertThat(watcher.stats().pending()).isLessThanOrEqualTo(14);

            bootstrap.set(KafkaTestBroker.bootstrap());
            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic,
                    r -> ports(KafkaTestBroker.events(r), "shop/web").size() >= 2
                            && Events.lastMarker(KafkaTestBroker.events(r), ObjectKind.NODE)
                                    .isPresent()));
            assertThat(ports(got, "shop/web")).allMatch(p -> p == 85); // never a state older than the current one
            assertThat(Events.lastState(got, ObjectKind.SERVICE, "shop/db")).isEmpty();
            assertThat(Events.lastMarker(got, ObjectKind.SERVICE).orElseThrow().sortedKeys())
                    .containsExactly("shop/web");
            await("the recovery")
                    .atMost(DEADLINE)
                    .until(() ->
                            watcher.stats().kafkaAvailable() && watcher.stats().recoveries() == 1);

            // Still watching afterwards.
            Files.writeString(
                    web,
                    "kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 90}]}");
            List<ClusterEvent> after = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic, r -> ports(KafkaTestBroker.events(r), "shop/web").contains(90)));
            assertThat(ports(after, "shop/web")).endsWith(90);
        }
    }
}
