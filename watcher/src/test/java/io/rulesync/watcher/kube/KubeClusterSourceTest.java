package io.rulesync.watcher.kube;

import static io.rulesync.watcher.kube.MockCluster.node;
import static io.rulesync.watcher.kube.MockCluster.service;
import static io.rulesync.watcher.kube.MockCluster.slice;
import static io.rulesync.watcher.testing.Events.about;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testing.tiers.Tiers;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.LogCapture;
import io.rulesync.watcher.testing.RecordingSink;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The informers against fabric8's mock API server in CRUD mode (real HTTP lists and websocket
 * watches), through the whole watcher into an in-memory sink. The cluster is configured the way a
 * fleet file configures it: by a kubeconfig file.
 *
 * <p>The three kinds have independent informers, so only the order within a kind is asserted.
 */
@Tag(Tiers.INTEGRATION)
class KubeClusterSourceTest {
    @TempDir
    Path dir;

    private MockCluster cluster;
    private KubernetesClient kube;
    private FleetConfig fleet;
    private Watcher watcher;

    @BeforeEach
    void cluster() throws Exception {
        cluster = new MockCluster();
        kube = cluster.client();
        fleet = FleetConfig.of(new ClusterSpec(
                "prod-eu",
                new ClusterSource.Kubeconfig(Optional.of(cluster.kubeconfig(dir)), Optional.empty()),
                ClusterSettings.DEFAULT));
    }

    @AfterEach
    void stop() {
        if (watcher != null) {
            watcher.close();
        }
        cluster.close();
    }

    private RecordingSink start() throws Exception {
        RecordingSink sink = new RecordingSink();
        watcher = Watcher.start(fleet, sink, Watcher.Options.defaults());
        assertThat(watcher.awaitSynced(Duration.ofSeconds(30)))
                .as("initial lists")
                .isTrue();
        sink.await("a marker per kind", ev -> ObjectKindsSynced.all(ev));
        return sink;
    }

    /** True when the events hold a sync marker for every kind. */
    private static final class ObjectKindsSynced {
        static boolean all(List<ClusterEvent> ev) {
            return List.of(ObjectKind.values()).stream()
                    .allMatch(k -> Events.lastMarker(ev, k).isPresent());
        }
    }

    private static long markers(List<ClusterEvent> ev, ObjectKind kind) {
        return ev.stream()
                .filter(e -> e instanceof SyncMarker s && s.kind() == kind)
                .count();
    }

    @Test
    void changesBecomeEventsInOrder() throws Exception {
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "web", "10.96.0.80", 80))
                .create();
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "pending", null, 81))
                .create(); // no IP yet: fine
        kube.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("shop")
                .resource(slice("shop", "web-abc", "web", "10.244.0.11"))
                .create();
        kube.nodes().resource(node("node-a", "192.168.0.1")).create();
        RecordingSink sink = start();

        List<ClusterEvent> initial = sink.events();
        assertThat(initial.get(0)).isInstanceOf(ClusterEvent.ListingStarted.class);
        assertThat(initial.get(1)).isInstanceOf(ClusterEvent.SettingsChanged.class);
        assertThat(initial).allMatch(e -> e.cluster().equals("prod-eu"));
        assertThat(about(initial, ObjectKind.SERVICE))
                .containsExactlyInAnyOrder(
                        "upsert Service shop/web",
                        "upsert Service shop/pending",
                        "sync Service [shop/pending, shop/web]");
        assertThat(about(initial, ObjectKind.SERVICE).get(2))
                .startsWith("sync"); // the marker comes after the list's upserts
        assertThat(about(initial, ObjectKind.ENDPOINT_SLICE))
                .containsExactly("upsert EndpointSlice shop/web-abc", "sync EndpointSlice [shop/web-abc]");
        assertThat(about(initial, ObjectKind.NODE)).containsExactly("upsert Node node-a", "sync Node [node-a]");
        Service web = (Service)
                Events.lastState(initial, ObjectKind.SERVICE, "shop/web").orElseThrow();
        assertThat(web.clusterIPs()).hasToString("[10.96.0.80]");
        assertThat(((Service) Events.lastState(initial, ObjectKind.SERVICE, "shop/pending")
                                .orElseThrow())
                        .clusterIPs())
                .isEmpty();

        // Updates: a port, an endpoint; a Node heartbeat (status conditions only) publishes nothing.
        kube.services().inNamespace("shop").withName("web").edit(s -> {
            s.getSpec().getPorts().get(0).setPort(8080);
            return s;
        });
        kube.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("shop")
                .withName("web-abc")
                .edit(s -> slice("shop", "web-abc", "web", "10.244.0.11", "10.244.0.12"));
        kube.nodes().withName("node-a").edit(n -> {
            n.getStatus()
                    .setConditions(List.of(new NodeConditionBuilder()
                            .withType("Ready")
                            .withStatus("True")
                            .withLastHeartbeatTime("2026-01-01T00:00:10Z")
                            .build()));
            n.getMetadata().getAnnotations().put("heartbeat", "10");
            return n;
        });
        kube.nodes().resource(node("node-b", "192.168.0.2")).create(); // a fence: the heartbeat was handled before it
        sink.await(
                "the updates",
                ev -> about(ev, ObjectKind.NODE).contains("upsert Node node-b")
                        && about(ev, ObjectKind.SERVICE).size() == 4
                        && about(ev, ObjectKind.ENDPOINT_SLICE).size() == 3);
        assertThat(about(sink.events(), ObjectKind.NODE))
                .containsExactly("upsert Node node-a", "sync Node [node-a]", "upsert Node node-b");
        assertThat(((Service) Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/web")
                                .orElseThrow())
                        .ports()
                        .get(0)
                        .port())
                .isEqualTo(8080);
        assertThat(((EndpointSlice) Events.lastState(sink.events(), ObjectKind.ENDPOINT_SLICE, "shop/web-abc")
                                .orElseThrow())
                        .endpoints())
                .hasSize(2);
        assertThat(((Node) Events.lastState(sink.events(), ObjectKind.NODE, "node-a")
                                .orElseThrow())
                        .zone())
                .isEqualTo("z1");
        assertThat(watcher.stats().suppressed()).isGreaterThanOrEqualTo(1);

        // Deletes.
        kube.services().inNamespace("shop").withName("web").delete();
        kube.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("shop")
                .withName("web-abc")
                .delete();
        kube.nodes().withName("node-a").delete();
        sink.await(
                "the deletes",
                ev -> about(ev, ObjectKind.NODE).contains("delete Node node-a")
                        && about(ev, ObjectKind.SERVICE).contains("delete Service shop/web")
                        && about(ev, ObjectKind.ENDPOINT_SLICE).contains("delete EndpointSlice shop/web-abc"));
        assertThat(about(sink.events(), ObjectKind.SERVICE))
                .endsWith("upsert Service shop/web", "delete Service shop/web");
        assertThat(about(sink.events(), ObjectKind.ENDPOINT_SLICE))
                .endsWith("upsert EndpointSlice shop/web-abc", "delete EndpointSlice shop/web-abc");
    }

    @Test
    void anInvalidObjectIsLoggedCountedAndNotPublished() throws Exception {
        RecordingSink sink = start();
        try (LogCapture log = new LogCapture()) {
            kube.services()
                    .inNamespace("shop")
                    .resource(service("shop", "bad", "10.96.0.9", 0))
                    .create();
            kube.services()
                    .inNamespace("shop")
                    .resource(service("shop", "good", "10.96.0.10", 80))
                    .create(); // a fence
            sink.await("the valid Service", ev -> about(ev, ObjectKind.SERVICE).contains("upsert Service shop/good"));
            assertThat(log.text())
                    .contains("cluster prod-eu: invalid object not published: "
                            + "Service shop/bad: spec.ports[0].port: 0 is out of range (1-65535)");
        }
        assertThat(about(sink.events(), ObjectKind.SERVICE))
                .containsExactly("sync Service []", "upsert Service shop/good");
        assertThat(watcher.stats().rejected()).isEqualTo(1);

        // A valid object that turns invalid keeps its last valid state (no delete), and is logged once.
        try (LogCapture log = new LogCapture()) {
            kube.services().inNamespace("shop").withName("good").edit(s -> {
                s.getSpec().getPorts().get(0).setPort(70000);
                return s;
            });
            kube.services().inNamespace("shop").withName("good").edit(s -> {
                s.getMetadata().getLabels().put("touched", "again");
                return s;
            });
            kube.services()
                    .inNamespace("shop")
                    .resource(service("shop", "fence", "10.96.0.11", 80))
                    .create();
            sink.await("the fence", ev -> about(ev, ObjectKind.SERVICE).contains("upsert Service shop/fence"));
            assertThat(log.text())
                    .containsOnlyOnce("cluster prod-eu: invalid object not published (its last valid state stays): "
                            + "Service shop/good: spec.ports[0].port: 70000 is out of range (1-65535)");
        }
        assertThat(about(sink.events(), ObjectKind.SERVICE))
                .containsExactly("sync Service []", "upsert Service shop/good", "upsert Service shop/fence");
        assertThat(watcher.feed("prod-eu").keys(ObjectKind.SERVICE)).containsExactly("shop/fence", "shop/good");

        // Each refused object is reported once per change of its problems, and cleared when it is fixed or deleted.
        kube.services().inNamespace("shop").withName("bad").delete();
        kube.services().inNamespace("shop").withName("good").edit(s -> {
            s.getSpec().getPorts().get(0).setPort(81);
            return s;
        });
        sink.await("the fix", ev -> Events.problems(ev).contains("problems Service shop/good []"));
        assertThat(Events.problems(sink.events()))
                .containsExactly(
                        "problem-sync []",
                        "problems Service shop/bad [Service shop/bad spec.ports[0].port]",
                        "problems Service shop/good [Service shop/good spec.ports[0].port]",
                        "problems Service shop/bad []",
                        "problems Service shop/good []");
        assertThat(watcher.feed("prod-eu").refusedObjects()).isZero();
    }

    @Test
    void afterARestartTheMarkersLackWhatWasDeletedWhileNoWatcherRan() throws Exception {
        for (String name : List.of("a", "b", "c")) {
            kube.services()
                    .inNamespace("shop")
                    .resource(service("shop", name, null, 80))
                    .create();
            kube.discovery()
                    .v1()
                    .endpointSlices()
                    .inNamespace("shop")
                    .resource(slice("shop", name + "-1", name, "10.244.0.1"))
                    .create();
        }
        kube.nodes().resource(node("n1", "192.168.0.1")).create();
        kube.nodes().resource(node("n2", "192.168.0.2")).create();
        RecordingSink first = start();
        assertThat(Events.lastMarker(first.events(), ObjectKind.SERVICE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("shop/a", "shop/b", "shop/c");
        watcher.close();
        watcher = null;

        kube.services().inNamespace("shop").withName("b").delete();
        kube.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("shop")
                .withName("b-1")
                .delete();
        kube.nodes().withName("n2").delete();
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "d", null, 80))
                .create();

        RecordingSink second = start();
        List<ClusterEvent> ev = second.events();
        assertThat(Events.lastMarker(ev, ObjectKind.SERVICE).orElseThrow().sortedKeys())
                .containsExactly("shop/a", "shop/c", "shop/d");
        assertThat(Events.lastMarker(ev, ObjectKind.ENDPOINT_SLICE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("shop/a-1", "shop/c-1");
        assertThat(Events.lastMarker(ev, ObjectKind.NODE).orElseThrow().sortedKeys())
                .containsExactly("n1");
        // The new process never knew the deleted objects: only the markers tell consumers they are gone.
        assertThat(Events.described(ev)).noneMatch(d -> d.startsWith("delete"));
    }

    @Test
    void anUnreachableClusterDoesNotHoldUpTheOthers() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        java.nio.file.Path down = dir.resolve("down-kubeconfig");
        java.nio.file.Files.writeString(
                down,
                java.nio.file.Files.readString(cluster.kubeconfig(dir))
                        .replaceAll("localhost:\\d+", "localhost:" + closed));
        kube.nodes().resource(node("n1", "192.168.0.1")).create();
        fleet = new FleetConfig(
                Optional.empty(),
                List.of(
                        new ClusterSpec(
                                "down",
                                new ClusterSource.Kubeconfig(Optional.of(down), Optional.empty()),
                                ClusterSettings.DEFAULT),
                        fleet.clusters().get(0)));
        RecordingSink sink = new RecordingSink();
        watcher = Watcher.start(fleet, sink, Watcher.Options.defaults());
        sink.await("the reachable cluster's markers", ev -> ObjectKindsSynced.all(sink.events("prod-eu")));
        assertThat(Events.described(sink.events("down"))).containsExactly("listing", "settings [IPV4]");
        assertThat(watcher.awaitSynced(Duration.ofMillis(200))).isFalse();
    }

    @Test
    void aRelistAfter410GoneDeletesWhatVanishedAndPublishesMarkers() throws Exception {
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "a", null, 80))
                .create();
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "b", null, 80))
                .create();
        kube.nodes().resource(node("n1", "192.168.0.1")).create();
        RecordingSink sink = start();

        // The API server goes away; meanwhile b is deleted, so no watch can report it. When it is back,
        // the watches' resourceVersions are too old (410 Gone) and fabric8 relists.
        cluster.stop();
        cluster.deleteFromStore("/api/v1/namespaces/shop/services/b");
        cluster.startWithGoneWatches();

        sink.await(
                "the relists",
                ev -> List.of(ObjectKind.values()).stream().allMatch(k -> markers(ev, k) >= 2)
                        && Events.lastMarker(ev, ObjectKind.SERVICE)
                                .orElseThrow()
                                .sortedKeys()
                                .equals(List.of("shop/a")));
        assertThat(about(sink.events(), ObjectKind.SERVICE))
                .containsSubsequence("sync Service [shop/a, shop/b]", "delete Service shop/b", "sync Service [shop/a]");
        assertThat(Events.lastMarker(sink.events(), ObjectKind.NODE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("n1");
        assertThat(Events.lastMarker(sink.events(), ObjectKind.ENDPOINT_SLICE)
                        .orElseThrow()
                        .sortedKeys())
                .isEmpty();

        // And the watch works again after the relist.
        kube.services()
                .inNamespace("shop")
                .resource(service("shop", "c", null, 80))
                .create();
        sink.await(
                "a change after the relist", ev -> about(ev, ObjectKind.SERVICE).contains("upsert Service shop/c"));
    }
}
