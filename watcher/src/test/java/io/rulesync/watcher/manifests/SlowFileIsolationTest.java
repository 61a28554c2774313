package io.rulesync.watcher.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.matchesPattern;

import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.publish.ClusterFeed;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.LogCapture;
import io.rulesync.watcher.testing.RecordingSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One slow or huge manifest file holds up neither the other clusters nor the other files of its
 * cluster (in the demo, before these limits, a 10 MB single-line file held up every change of its cluster for
 * 45 s). No assertion is on time: the bounds are generous, and what is asserted is which events
 * arrived and in which order; the latencies are printed. (The timeout turns a source that blocks its
 * caller, as the first read once did, into a failure rather than a hang.)
 */
@Timeout(120)
class SlowFileIsolationTest {
    /** Generous: CI machines are slow, and no test asserts on time. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private Path a;
    private Path b;
    private final RecordingSink sink = new RecordingSink();
    private final List<AutoCloseable> running = new ArrayList<>();

    private static String service(String name, int port) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: shop}\nspec: {ports: [{port: " + port
                + "}]}\n";
    }

    /** The probe's file: a Service whose one annotation is a single line, the file {@code bytes} long. */
    private static String longLine(String name, int bytes) {
        String head = "kind: Service\nmetadata:\n  name: " + name + "\n  namespace: shop\n  annotations:\n    big: ";
        String tail = "\nspec: {ports: [{port: 80}]}\n";
        return head + "a".repeat(bytes - head.length() - tail.length()) + tail;
    }

    /** Written aside and moved in, so that no poll sees it half-written (hidden files are not read). */
    private static void writeAtOnce(Path file, String text) throws Exception {
        Path tmp = Files.writeString(file.resolveSibling("." + file.getFileName() + ".tmp"), text);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    @BeforeEach
    void folders() throws Exception {
        a = Files.createDirectories(root.resolve("a"));
        b = Files.createDirectories(root.resolve("b"));
        for (Path dir : List.of(a, b)) {
            Files.writeString(dir.resolve("web.yaml"), service("web", 80));
            Files.writeString(dir.resolve("db.yaml"), service("db", 5432));
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : running) {
            c.close();
        }
    }

    private Watcher watch(Watcher.Options options) throws Exception {
        Watcher w = Watcher.start(
                FleetConfig.of(
                        new ClusterSpec("demo-a", new ClusterSource.ManifestFolder(a), ClusterSettings.DEFAULT),
                        new ClusterSpec("demo-b", new ClusterSource.ManifestFolder(b), ClusterSettings.DEFAULT)),
                sink,
                options);
        running.add(w);
        assertThat(w.awaitSynced(DEADLINE)).isTrue();
        return w;
    }

    private static int port(List<ClusterEvent> events, String key) {
        return Events.lastState(events, ObjectKind.SERVICE, key)
                .map(s -> ((Service) s).ports().get(0).port())
                .orElse(-1);
    }

    private static int indexOf(List<ClusterEvent> events, String cluster, String key, int port) {
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) instanceof ClusterEvent.ObjectUpserted u
                    && u.cluster().equals(cluster)
                    && u.ref().key().equals(key)
                    && ((Service) u.object()).ports().get(0).port() == port) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void underAFileLimitTheProbesTenMegabyteSingleLineFileIsRefusedUnreadAndHoldsUpNoOtherEdit() throws Exception {
        Watcher watcher = watch(Watcher.Options.defaults().withManifestFileLimit(4L << 20));
        sink.clear();
        try (LogCapture log = new LogCapture()) {
            long t0 = System.nanoTime();
            writeAtOnce(a.resolve("big.yaml"), longLine("big", 10_000_000));
            Files.writeString(a.resolve("web.yaml"), service("web", 81));
            Files.writeString(b.resolve("web.yaml"), service("web", 82));
            sink.await(
                    "both edits",
                    ev -> port(sink.events("demo-a"), "shop/web") == 81
                            && port(sink.events("demo-b"), "shop/web") == 82);
            System.out.printf(
                    "edits published %.2f s after the 10 MB file was written%n", (System.nanoTime() - t0) / 1e9);
            // The matcher's mismatch shows the log so far.
            await("the refusal of big.yaml")
                    .atMost(DEADLINE)
                    .until(
                            log::text,
                            containsString(
                                    "big.yaml: is 10,000,000 bytes (9.5 MiB), over the limit of 4,194,304 bytes (4.0 MiB) per file; split it into several files"));
        }
        assertThat(Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/big"))
                .isEmpty();
        assertThat(Events.lastMarker(sink.events("demo-a"), ObjectKind.SERVICE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("shop/db", "shop/web");
        assertThat(watcher.stats().rejected()).isEqualTo(1);
    }

    /**
     * Under the default limit the 10 MB file is read (it took a minute before the reader was mended), and refused for its
     * annotation as soon as the object is past 3 MiB; meanwhile, and after, edits go through.
     */
    @Test
    void theLongLineIsRefusedForItsObjectsSizeAndEditsGoThrough() throws Exception {
        watch(Watcher.Options.defaults());
        sink.clear();
        try (LogCapture log = new LogCapture()) {
            long t0 = System.nanoTime();
            writeAtOnce(a.resolve("big.yaml"), longLine("big", 10_000_000));
            Files.writeString(a.resolve("web.yaml"), service("web", 81));
            Files.writeString(b.resolve("web.yaml"), service("web", 82));
            sink.await(
                    "both edits",
                    ev -> port(sink.events("demo-a"), "shop/web") == 81
                            && port(sink.events("demo-b"), "shop/web") == 82);
            long edits = System.nanoTime();
            await("the refusal of big.yaml")
                    .atMost(DEADLINE)
                    .until(
                            log::text,
                            matchesPattern(
                                    "(?s).*big\\.yaml \\(document 1\\): is at least [0-9,]+ characters long, over the API server's limit of 3,145,728 \\(3 MiB\\)"
                                            + " per object; read no further.*"));
            System.out.printf(
                    "edits published %.2f s, the 10 MB file refused %.2f s after it was written%n",
                    (edits - t0) / 1e9, (System.nanoTime() - t0) / 1e9);

            Files.writeString(a.resolve("db.yaml"), service("db", 5433));
            sink.await("the next edit", ev -> port(sink.events("demo-a"), "shop/db") == 5433);
        }
        assertThat(Events.lastState(sink.events(), ObjectKind.SERVICE, "shop/big"))
                .isEmpty();
    }

    // ---- a file whose read does not end (a hung network file system, say), standing in for any slow file ----

    private final List<ClusterEvent> events = new ArrayList<>();
    private final AtomicBoolean slowArmed = new AtomicBoolean();
    private final CountDownLatch slowEntered = new CountDownLatch(1);
    private final CountDownLatch slowReleased = new CountDownLatch(1);

    /** {@link ManifestReader}, except that once armed, reading slow.yaml waits until released. */
    private void read(Path file, long limit, Consumer<ManifestDocument> each) throws ManifestException {
        if (file.getFileName().toString().equals("slow.yaml") && slowArmed.get()) {
            slowEntered.countDown();
            try {
                slowReleased.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        ManifestReader.readEach(List.of(file), limit, each);
    }

    private ManifestFolderSource source(String cluster, Path folder) {
        ClusterFeed feed = new ClusterFeed(
                cluster,
                e -> {
                    synchronized (events) {
                        events.add(e);
                    }
                },
                Clock.systemUTC());
        ManifestFolderSource s = ManifestFolderSource.start(
                cluster, folder, feed, Duration.ofMillis(200), ManifestReader.DEFAULT_MAX_FILE_BYTES, this::read);
        running.add(s);
        return s;
    }

    private List<ClusterEvent> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    private List<ClusterEvent> events(String cluster) {
        return events().stream().filter(e -> e.cluster().equals(cluster)).toList();
    }

    @Test
    void aFileStillBeingReadHoldsUpNeitherTheFilesChangedWithItNorAnotherCluster() throws Exception {
        Files.writeString(a.resolve("slow.yaml"), service("slow", 80));
        ManifestFolderSource sourceA = source("demo-a", a);
        ManifestFolderSource sourceB = source("demo-b", b);
        await("the first reads").atMost(DEADLINE).until(() -> sourceA.reads() > 0 && sourceB.reads() > 0);
        assertThat(port(events("demo-a"), "shop/slow")).isEqualTo(80);

        slowArmed.set(true);
        long t0 = System.nanoTime();
        Files.writeString(a.resolve("slow.yaml"), service("slow", 81));
        Files.writeString(a.resolve("web.yaml"), service("web", 81));
        Files.writeString(b.resolve("web.yaml"), service("web", 82));
        await("both edits")
                .atMost(DEADLINE)
                .untilAsserted(() -> assertThat(
                                port(events("demo-a"), "shop/web") == 81 && port(events("demo-b"), "shop/web") == 82)
                        .as(() -> "events so far:\n" + Events.describe(events()))
                        .isTrue());
        System.out.printf(
                "edits published %.2f s after they were written, slow.yaml still being read%n",
                (System.nanoTime() - t0) / 1e9);

        // Published while slow.yaml was still being read: its Service keeps the state last read.
        assertThat(slowEntered.getCount()).isZero();
        assertThat(sourceA.reading()).containsExactly(a.resolve("slow.yaml"));
        assertThat(port(events("demo-a"), "shop/slow")).isEqualTo(80);
        assertThat(Events.lastMarker(events("demo-a"), ObjectKind.SERVICE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("shop/db", "shop/slow", "shop/web");
        assertThat(Events.described(events("demo-a"))).doesNotContain("delete Service shop/slow");

        // Its change is published when its read ends, after the others.
        slowReleased.countDown();
        await("the slow file's edit").atMost(DEADLINE).until(() -> port(events("demo-a"), "shop/slow") == 81);
        List<ClusterEvent> all = events();
        assertThat(indexOf(all, "demo-a", "shop/slow", 81))
                .isGreaterThan(indexOf(all, "demo-a", "shop/web", 81))
                .isGreaterThan(indexOf(all, "demo-b", "shop/web", 82));
        assertThat(sourceA.reading()).isEmpty();

        // And the source goes on as before.
        Files.writeString(a.resolve("slow.yaml"), service("slow", 82));
        await("the next edit").atMost(DEADLINE).until(() -> port(events("demo-a"), "shop/slow") == 82);
    }

    @Test
    void theFirstReadWaitsForEveryFileWhileAnotherClusterGoesAhead() throws Exception {
        Files.writeString(a.resolve("slow.yaml"), service("slow", 80));
        slowArmed.set(true);
        ManifestFolderSource sourceA = source("demo-a", a);
        ManifestFolderSource sourceB = source("demo-b", b);
        await("demo-b's first read, demo-a's under way")
                .atMost(DEADLINE)
                .until(() -> sourceB.reads() > 0 && slowEntered.getCount() == 0);
        Files.writeString(b.resolve("web.yaml"), service("web", 82));
        await("demo-b's edit").atMost(DEADLINE).until(() -> port(events("demo-b"), "shop/web") == 82);

        // No marker for demo-a yet: one now would leave out slow.yaml's objects.
        assertThat(sourceA.reads()).isZero();
        assertThat(events("demo-a")).isEmpty();

        slowReleased.countDown();
        await("demo-a's first read").atMost(DEADLINE).until(() -> sourceA.reads() > 0);
        assertThat(Events.lastMarker(events("demo-a"), ObjectKind.SERVICE)
                        .orElseThrow()
                        .sortedKeys())
                .containsExactly("shop/db", "shop/slow", "shop/web");
    }
}
