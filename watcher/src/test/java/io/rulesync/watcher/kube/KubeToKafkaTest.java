package io.rulesync.watcher.kube;

import static io.rulesync.watcher.kube.MockCluster.node;
import static io.rulesync.watcher.kube.MockCluster.service;
import static io.rulesync.watcher.kube.MockCluster.slice;
import static io.rulesync.watcher.testing.Events.about;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import io.rulesync.watcher.testing.KafkaTestBroker.Received;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: one watcher process, two clusters (a mock API server and a manifest folder), the real
 * Kafka producer, an embedded KRaft broker; the events are consumed from the topic and decoded.
 */
@RequiresKafka
class KubeToKafkaTest {
    @TempDir
    Path dir;

    private MockCluster cluster;
    private KubernetesClient kube;
    private FleetConfig fleet;
    private String topic;
    private Watcher watcher;

    @BeforeEach
    void setUp() throws Exception {
        cluster = new MockCluster();
        kube = cluster.client();
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Files.writeString(folder.resolve("web.yaml"), """
                kind: Service
                metadata: {name: web, namespace: demo}
                spec: {clusterIP: 10.96.0.80, ports: [{port: 80}]}
                """);
        fleet = FleetConfig.of(
                new ClusterSpec(
                        "prod-eu",
                        new ClusterSource.Kubeconfig(Optional.of(cluster.kubeconfig(dir)), Optional.empty()),
                        ClusterSettings.DEFAULT),
                new ClusterSpec("demo-a", new ClusterSource.ManifestFolder(folder), ClusterSettings.DEFAULT));
        topic = KafkaTestBroker.newTopic("kube-to-kafka");
    }

    @AfterEach
    void tearDown() {
        if (watcher != null) {
            watcher.close();
        }
        cluster.close();
    }

    private Watcher start() throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestBroker.bootstrap());
        Watcher w = Watcher.start(fleet, p, topic);
        assertThat(w.awaitSynced(Duration.ofSeconds(30))).isTrue();
        return w;
    }

    private static List<ClusterEvent> of(List<Received> received, String cluster) {
        return received.stream()
                .map(Received::event)
                .filter(e -> e.cluster().equals(cluster))
                .toList();
    }

    private static long markers(List<ClusterEvent> ev, ObjectKind kind) {
        return ev.stream()
                .filter(e -> e instanceof SyncMarker s && s.kind() == kind)
                .count();
    }

    @Test
    void eventsArriveKeyedByClusterInOrder() throws Exception {
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "web", "10.96.0.80", 80))
                .create();
        kube.nodes().resource(node("node-a", "192.168.0.1")).create();
        watcher = start();
        // The list is published before the changes below, which could otherwise supersede it in the watcher's queue.
        KafkaTestBroker.readUntil(
                topic, r -> about(of(r, "prod-eu"), ObjectKind.SERVICE).contains("upsert Service shop/web"));
        kube.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("shop")
                .resource(slice("shop", "web-1", "web", "10.244.0.1"))
                .create();
        kube.services().inNamespace("shop").withName("web").edit(s -> {
            s.getSpec().getPorts().get(0).setPort(81);
            return s;
        });
        kube.services().inNamespace("shop").withName("web").delete();

        List<Received> got = KafkaTestBroker.readUntil(
                topic,
                r -> about(of(r, "prod-eu"), ObjectKind.SERVICE).contains("delete Service shop/web")
                        && about(of(r, "prod-eu"), ObjectKind.ENDPOINT_SLICE)
                                .contains("upsert EndpointSlice shop/web-1")
                        && Events.lastMarker(of(r, "demo-a"), ObjectKind.NODE).isPresent());

        // Keyed by cluster id, so each cluster's events share one partition (and keep their order).
        assertThat(got).allMatch(r -> r.key().equals(r.event().cluster()));
        Map<String, Set<Integer>> partitions = got.stream()
                .collect(Collectors.groupingBy(
                        Received::key, Collectors.mapping(Received::partition, Collectors.toSet())));
        assertThat(partitions)
                .containsOnlyKeys("prod-eu", "demo-a")
                .allSatisfy((k, v) -> assertThat(v).hasSize(1));

        List<ClusterEvent> prod = of(got, "prod-eu");
        assertThat(prod.get(0)).isInstanceOf(ClusterEvent.ListingStarted.class);
        assertThat(prod.get(1)).isInstanceOf(ClusterEvent.SettingsChanged.class);
        // The edit's upsert may be superseded by the delete before it is published (the watcher keeps only the
        // newest state of an object): then it never reaches Kafka, which level-based events allow. When it is
        // published, it comes between the list and the delete, with the edited port.
        List<String> services = about(prod, ObjectKind.SERVICE);
        assertThat(services)
                .startsWith("upsert Service shop/web", "sync Service [shop/web]")
                .endsWith("delete Service shop/web")
                .hasSizeBetween(3, 4);
        List<ClusterEvent.ObjectUpserted> upserts = prod.stream()
                .filter(e ->
                        e instanceof ClusterEvent.ObjectUpserted u && u.ref().kind() == ObjectKind.SERVICE)
                .map(e -> (ClusterEvent.ObjectUpserted) e)
                .toList();
        assertThat(upserts).hasSize(services.size() - 2);
        if (upserts.size() == 2) {
            assertThat(services.get(2)).isEqualTo("upsert Service shop/web");
            assertThat(((io.rulesync.model.cluster.Service) upserts.get(1).object())
                            .ports()
                            .get(0)
                            .port())
                    .isEqualTo(81);
        }
        assertThat(about(prod, ObjectKind.NODE)).containsExactly("upsert Node node-a", "sync Node [node-a]");
        assertThat(about(prod, ObjectKind.ENDPOINT_SLICE))
                .containsExactly("sync EndpointSlice []", "upsert EndpointSlice shop/web-1");
        // (The problem sync after the Node marker may or may not have been read yet.)
        assertThat(Events.described(Events.withoutProblems(of(got, "demo-a"))))
                .containsExactly(
                        "listing",
                        "settings [IPV4]",
                        "upsert Service demo/web",
                        "sync Service [demo/web]",
                        "sync EndpointSlice []",
                        "sync Node []");
        assertThat(watcher.publishedEvents()).isGreaterThanOrEqualTo(got.size());
    }

    @Test
    void afterARestartTheSyncMarkerOnTheTopicLacksTheDeletedKeys() throws Exception {
        for (String name : List.of("a", "b", "c")) {
            kube.services()
                    .inNamespace("shop")
                    .resource(service("shop", name, null, 80))
                    .create();
        }
        watcher = start();
        KafkaTestBroker.readUntil(topic, r -> markers(of(r, "prod-eu"), ObjectKind.SERVICE) == 1);
        watcher.close();
        watcher = null;

        kube.services().inNamespace("shop").withName("b").delete();
        watcher = start();
        // Until the restarted watcher's marker: the first may have listed more than once (a watch that reconnected
        // under
        // load relists), so a count of markers could stop before the restart's.
        List<Received> got = KafkaTestBroker.readUntil(
                topic,
                r -> Events.lastMarker(of(r, "prod-eu"), ObjectKind.SERVICE)
                        .map(m -> !m.keys().contains("shop/b"))
                        .orElse(false));
        List<ClusterEvent> prod = of(got, "prod-eu");
        assertThat(about(prod, ObjectKind.SERVICE))
                .containsSubsequence("sync Service [shop/a, shop/b, shop/c]", "sync Service [shop/a, shop/c]");
        assertThat(Events.lastMarker(prod, ObjectKind.SERVICE).orElseThrow().keys())
                .containsExactlyInAnyOrder("shop/a", "shop/c");
    }
}
