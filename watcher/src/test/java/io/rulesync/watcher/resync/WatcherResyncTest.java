package io.rulesync.watcher.resync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher's side of anti-entropy, on a real broker: it publishes each cluster's state digest
 * periodically, and answers a resync request for one of its clusters with the cluster's whole state
 * and a digest. Requests for other watchers' clusters change nothing.
 */
@RequiresKafka
class WatcherResyncTest {
    @TempDir
    Path dir;

    private static long count(List<KafkaTestBroker.Received> received, String description) {
        return received.stream()
                .filter(r -> Events.describe(r.event()).equals(description))
                .count();
    }

    private FleetConfig fleet() throws Exception {
        Files.writeString(dir.resolve("web.yaml"), """
                kind: Service
                metadata: {name: web, namespace: shop}
                spec: {clusterIP: 10.96.0.80, ports: [{name: http, port: 80}]}
                ---
                kind: Node
                metadata: {name: node-a}
                status: {addresses: [{type: InternalIP, address: 192.168.0.1}]}
                """);
        return FleetConfig.of(
                new ClusterSpec("demo-a", new ClusterSource.ManifestFolder(dir), ClusterSettings.DEFAULT));
    }

    /** An events topic and its resync topic (the compiler creates the latter in production). */
    private static String topics() throws Exception {
        String topic = KafkaTestBroker.newTopic("events");
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestBroker.bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(Topics.resyncsOf(topic), 2, (short) 1)))
                    .all()
                    .get();
        }
        return topic;
    }

    private static Properties producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestBroker.bootstrap());
        return p;
    }

    @Test
    void eachClustersStateDigestGoesOutPeriodically() throws Exception {
        String topic = topics();
        try (Watcher watcher = Watcher.start(
                fleet(), producer(), topic, Watcher.Options.defaults().withDigestInterval(Duration.ofMillis(300)))) {
            assertThat(watcher.awaitSynced(Duration.ofSeconds(30))).isTrue();
            // A digest covers the kinds whose first list completed, so one sent while the folder was still being read
            // (the
            // topic is read from its start) may lack some: periodic means more digests come, and the later ones cover
            // all.
            List<KafkaTestBroker.Received> read = KafkaTestBroker.readUntil(
                    topic,
                    r -> r.stream()
                                            .filter(x -> x.event() instanceof StateDigest)
                                            .count()
                                    >= 2
                            && r.stream()
                                    .anyMatch(x -> x.event() instanceof StateDigest d
                                            && d.objects().size() == 3));
            StateDigest digest = (StateDigest) read.stream()
                    .filter(x ->
                            x.event() instanceof StateDigest d && d.objects().size() == 3)
                    .findFirst()
                    .orElseThrow()
                    .event();
            assertThat(digest.objects())
                    .containsOnlyKeys(ObjectKind.SERVICE, ObjectKind.ENDPOINT_SLICE, ObjectKind.NODE);
            assertThat(digest.objects().get(ObjectKind.SERVICE).count()).isEqualTo(1);
            assertThat(digest.objects().get(ObjectKind.ENDPOINT_SLICE).count()).isZero();
            assertThat(digest.objects().get(ObjectKind.NODE).count()).isEqualTo(1);
            assertThat(digest.settings()).isNotNull();
        }
    }

    @Test
    void aRequestForOneOfItsClustersRepublishesItsWholeStateThenADigest() throws Exception {
        String topic = topics();
        try (Watcher watcher = Watcher.start(
                fleet(), producer(), topic, Watcher.Options.defaults().withDigestInterval(Duration.ZERO))) {
            assertThat(watcher.awaitSynced(Duration.ofSeconds(30))).isTrue();
            await("the watcher to listen for resync requests")
                    .atMost(Duration.ofSeconds(30))
                    .until(watcher::listeningForResyncs);
            KafkaTestBroker.readUntil(topic, r -> count(r, "sync Node [node-a]") == 1);

            Properties p = producer();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> requests = new KafkaProducer<>(p)) {
                requests.send(new ProducerRecord<>(
                                Topics.resyncsOf(topic),
                                "elsewhere",
                                new ResyncRequest("elsewhere", "not ours", Instant.now()).encode()))
                        .get();
                requests.send(new ProducerRecord<>(
                                Topics.resyncsOf(topic),
                                "demo-a",
                                new ResyncRequest("demo-a", "the events log was replaced", Instant.now()).encode()))
                        .get();
            }
            // Digests are off here, so the one that appears is the resync's own, after the republished state.
            List<ClusterEvent> events = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic, r -> r.stream().anyMatch(x -> x.event() instanceof StateDigest)));
            List<String> described = Events.described(events);
            int digestAt = described.indexOf(described.stream()
                    .filter(d -> d.startsWith("digest"))
                    .findFirst()
                    .orElseThrow());
            assertThat(described.subList(0, digestAt))
                    .filteredOn("upsert Service shop/web"::equals)
                    .hasSize(2);
            assertThat(described.subList(0, digestAt))
                    .filteredOn("sync Node [node-a]"::equals)
                    .hasSize(2);
            assertThat(events).allMatch(e -> e.cluster().equals("demo-a"));
            // The other cluster's request was not ours: one republish for one request, everything in the topic read.
            Thread.sleep(1000); // deliberate: time for a wrong republish to show up before the count
            List<KafkaTestBroker.Received> all = KafkaTestBroker.readToEnd(topic);
            assertThat(count(all, "upsert Service shop/web")).isEqualTo(2);
            assertThat(all).filteredOn(x -> x.event() instanceof StateDigest).hasSize(1);
        }
    }
}
