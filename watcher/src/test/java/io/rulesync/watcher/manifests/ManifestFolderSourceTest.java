package io.rulesync.watcher.manifests;

import static io.rulesync.watcher.testing.Events.about;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.LogCapture;
import io.rulesync.watcher.testing.RecordingSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The folder source, through the whole watcher (feeds, queue, publisher) into an in-memory sink. */
class ManifestFolderSourceTest {
    private static final String WEB = """
            apiVersion: v1
            kind: Service
            metadata: {name: web, namespace: shop}
            spec: {clusterIP: 10.96.0.80, ports: [{name: http, port: 80, targetPort: 8080}]}
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
            addressType: IPv4
            ports: [{name: http, port: 8080}]
            endpoints: [{addresses: [10.244.0.11], nodeName: node-a}]
            """;
    private static final String NODES = """
            kind: List
            items:
            - {kind: Node, metadata: {name: node-a}, status: {addresses: [{type: InternalIP, address: 192.168.0.1}]}}
            - {kind: Node, metadata: {name: node-b}, status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}}
            """;
    private static final String DB = """
            kind: Service
            metadata: {name: db, namespace: shop}
            spec: {clusterIP: 10.96.0.54, ports: [{port: 5432}]}
            ---
            kind: ConfigMap
            metadata: {name: ignored, namespace: shop}
            """;

    @TempDir
    Path dir;

    private final RecordingSink sink = new RecordingSink();
    private Watcher watcher;
    private final ClusterSettings settings =
            new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of());

    @BeforeEach
    void files() throws Exception {
        Files.writeString(dir.resolve("web.yaml"), WEB);
        Files.createDirectories(dir.resolve("infra"));
        Files.writeString(dir.resolve("infra/nodes.yml"), NODES);
        Files.writeString(dir.resolve("db.json.yaml"), DB);
        Files.writeString(
                dir.resolve(".hidden.yaml"), "kind: Service\nmetadata: {name: hidden}\nspec: {ports: [{port: 1}]}");
        Files.writeString(dir.resolve("README.md"), "not a manifest");
    }

    @AfterEach
    void stop() {
        if (watcher != null) {
            watcher.close();
        }
    }

    private void start() throws Exception {
        watcher = Watcher.start(
                FleetConfig.of(new ClusterSpec("demo-a", new ClusterSource.ManifestFolder(dir), settings)),
                sink,
                Watcher.Options.defaults());
        assertThat(watcher.awaitSynced(java.time.Duration.ofSeconds(30))).isTrue();
        sink.await(
                "the first read", ev -> Events.lastMarker(ev, ObjectKind.NODE).isPresent());
    }

    private int markersOf(List<ClusterEvent> events) {
        return (int) events.stream()
                .filter(e -> e instanceof ClusterEvent.SyncMarker)
                .count();
    }

    @Test
    void theFirstReadPublishesSettingsObjectsAndMarkers() throws Exception {
        start();
        List<ClusterEvent> ev = sink.events();
        assertThat(ev).allMatch(e -> e.cluster().equals("demo-a"));
        assertThat(ev.get(0))
                .isEqualTo(new ClusterEvent.ListingStarted("demo-a", ev.get(0).observedAt()));
        assertThat(ev.get(1))
                .isEqualTo(new ClusterEvent.SettingsChanged(
                        "demo-a", settings, ev.get(1).observedAt()));
        assertThat(Events.described(ev.subList(2, ev.size())))
                .containsExactly(
                        "upsert Service shop/db",
                        "upsert Node node-a",
                        "upsert Node node-b",
                        "upsert Service shop/web",
                        "upsert EndpointSlice shop/web-1",
                        "sync Service [shop/db, shop/web]",
                        "sync EndpointSlice [shop/web-1]",
                        "sync Node [node-a, node-b]",
                        "problem-sync []");
    }

    @Test
    void anEditIsPublishedAsAnUpsertOfTheChangedObjectOnly() throws Exception {
        start();
        sink.clear();
        Files.writeString(dir.resolve("web.yaml"), WEB.replace("port: 80,", "port: 81,"));
        sink.await("the edit", ev -> markersOf(ev) == 3);
        assertThat(Events.described(sink.events()))
                .containsExactly(
                        "upsert Service shop/web",
                        "sync Service [shop/db, shop/web]",
                        "sync EndpointSlice [shop/web-1]",
                        "sync Node [node-a, node-b]");
        Service web = (Service)
                Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/web").orElseThrow();
        assertThat(web.ports().get(0).port()).isEqualTo(81);
    }

    @Test
    void aRemovedFileDeletesItsObjects() throws Exception {
        start();
        sink.clear();
        Files.delete(dir.resolve("infra/nodes.yml"));
        sink.await("the deletes", ev -> markersOf(ev) == 3);
        assertThat(about(sink.events(), ObjectKind.NODE))
                .containsExactly("delete Node node-a", "delete Node node-b", "sync Node []");
        assertThat(about(sink.events(), ObjectKind.SERVICE)).containsExactly("sync Service [shop/db, shop/web]");
    }

    @Test
    void aBrokenFileIsReportedOnceAndItsLastGoodObjectsStay() throws Exception {
        start();
        sink.clear();
        Path web = dir.resolve("web.yaml");
        Path fresh = dir.resolve("new.yaml");
        try (LogCapture log = new LogCapture()) {
            // An invalid port in a file that was valid, and a new file that never was.
            Files.writeString(web, WEB.replace("port: 80,", "port: 0,"));
            Files.writeString(fresh, "kind: Service\nmetadata: {name: new, namespace: shop}\nspec: [unclosed");
            sink.await("the read after the break", ev -> markersOf(ev) == 3);
            assertThat(log.text())
                    .contains("cluster demo-a: file " + web + " is invalid, keeping the 2 objects last read from it: "
                            + web + " (document 1): Service shop/web: spec.ports[0].port: 0 is out of range (1-65535)")
                    .contains("cluster demo-a: file " + fresh + " is invalid, it contributes no objects: " + fresh
                            + ": not valid YAML or JSON");
        }
        assertThat(Events.described(sink.events()))
                .containsExactly(
                        "problems " + fresh + " [-]",
                        "problems " + web + " [Service shop/web spec.ports[0].port]",
                        "sync Service [shop/db, shop/web]",
                        "sync EndpointSlice [shop/web-1]",
                        "sync Node [node-a, node-b]");
        assertThat(watcher.stats().rejected()).isEqualTo(2);
        assertThat(watcher.feed("demo-a").refusedObjects()).isEqualTo(2);

        // Other files change, and the broken one is written again with the same content: read again, not reported
        // again.
        sink.clear();
        try (LogCapture log = new LogCapture()) {
            Files.writeString(dir.resolve("db.json.yaml"), DB.replace("5432", "5433"));
            Files.writeString(web, WEB.replace("port: 80,", "port: 0,") + "\n");
            sink.await("the other edit", ev -> markersOf(ev) == 3);
            Files.writeString(dir.resolve("db.json.yaml"), DB);
            sink.await("the edit back", ev -> markersOf(ev) == 6);
            assertThat(log.text()).doesNotContain("is invalid");
        }
        assertThat(Events.problems(sink.events())).isEmpty();
        assertThat(watcher.stats().rejected()).isEqualTo(2);
        assertThat(watcher.feed("demo-a").problemReports()).isEqualTo(2);

        // Fixed: the new state is published, and both files' problems are resolved (one fixed, one removed).
        sink.clear();
        Files.writeString(web, WEB.replace("port: 80,", "port: 82,"));
        Files.delete(fresh);
        sink.await("the fix", ev -> markersOf(ev) == 3);
        assertThat(Events.described(sink.events()))
                .containsExactly(
                        "problems " + web + " []",
                        "problems " + fresh + " []",
                        "upsert Service shop/web",
                        "sync Service [shop/db, shop/web]",
                        "sync EndpointSlice [shop/web-1]",
                        "sync Node [node-a, node-b]");
        Service svc = (Service)
                Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/web").orElseThrow();
        assertThat(svc.ports().get(0).port()).isEqualTo(82);
        assertThat(watcher.feed("demo-a").refusedObjects()).isZero();
        assertThat(watcher.feed("demo-a").problemReports()).isEqualTo(4);
    }

    @Test
    void anObjectInTwoFilesIsKeptFromTheFirstAndTheSecondFileReportsIt() throws Exception {
        Path copy = dir.resolve("zz-copy.yaml");
        Files.writeString(copy, DB.replace("5432", "5433"));
        try (LogCapture log = new LogCapture()) {
            start();
            assertThat(log.text())
                    .contains("cluster demo-a: file " + copy + ": 1 object(s) already defined in an earlier file are "
                            + "ignored: " + copy + ": Service shop/db: already defined in "
                            + dir.resolve("db.json.yaml"));
        }
        Service db = (Service)
                Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/db").orElseThrow();
        assertThat(db.ports().get(0).port()).isEqualTo(5432);
        assertThat(Events.problems(sink.events()))
                .containsExactly("problems " + copy + " [Service shop/db]", "problem-sync [" + copy + "]");
    }

    @Test
    void aNewlineInAFileNameOrAKeyIsLoggedAndReportedEscaped() throws Exception {
        Path odd = dir.resolve("odd\n12:00:00.000 [main] INFO all good.yaml");
        Files.writeString(
                odd,
                "kind: Service\nmetadata: {name: \"web\\nINFO forged\", namespace: shop}\nspec: {ports: [{port: 80}]}\n");
        String escaped = dir + "/odd\\x0a12:00:00.000 [main] INFO all good.yaml";
        try (LogCapture log = new LogCapture()) {
            start();
            assertThat(log.text())
                    .contains(
                            "cluster demo-a: file " + escaped + " is invalid, it contributes no objects: " + escaped
                                    + " (document 1): Service shop/web\\x0aINFO forged: metadata.name: 'web\\x0aINFO forged' is not a DNS-1035 label");
            assertThat(log.text().lines()).noneMatch(l -> l.startsWith("12:00:00.000") || l.startsWith("INFO forged"));
        }
        assertThat(Events.problems(sink.events()))
                .containsExactly(
                        "problems " + escaped + " [Service shop/web\\x0aINFO forged metadata.name]",
                        "problem-sync [" + escaped + "]");
    }

    @Test
    void settingsChangesArePublished() throws Exception {
        start();
        sink.clear();
        ClusterSettings dual =
                new ClusterSettings(List.of(IpFamily.IPV4, IpFamily.IPV6), List.of(), true, 14, List.of());
        watcher.updateSettings("demo-a", dual);
        watcher.updateSettings("demo-a", dual); // unchanged: nothing
        sink.await("the settings", ev -> !ev.isEmpty());
        assertThat(sink.events())
                .singleElement()
                .isInstanceOf(ClusterEvent.SettingsChanged.class)
                .extracting(e -> ((ClusterEvent.SettingsChanged) e).settings())
                .isEqualTo(dual);
    }
}
