package io.rulesync.watcher.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WatcherCommandTest {
    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {}

    private static Run run(WatcherCommand cmd, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(cmd)
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void helpDescribesTheOptions() {
        Run r = run(new WatcherCommand(), "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains(
                        "Usage: watcher",
                        "--fleet=FILE",
                        "--kafka=HOST:PORT",
                        "--topic=TOPIC",
                        "--max-file-size=MIB",
                        "Default: rulesync.cluster-events");
    }

    @Test
    void anInvalidFleetFileExitsWith2AndOneLinePerProblem() throws Exception {
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, """
                clusters:
                  - id: prod-eu
                    settings: {masqueradeBit: 99}
                  - id: demo
                    manifests: nowhere
                """);
        Run r = run(new WatcherCommand(), "--fleet", fleet.toString(), "--kafka", "127.0.0.1:1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines())
                .containsExactly(
                        fleet + ": cluster prod-eu: settings.masqueradeBit: 99 is out of range (0-31)",
                        fleet + ": cluster demo: manifests: '" + dir.resolve("nowhere") + "' is not a folder");
    }

    @Test
    void aMalformedKafkaAddressExitsWith2() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters: [{id: demo-a, manifests: " + folder + "}]");
        Run r = run(new WatcherCommand(), "--fleet", fleet.toString(), "--kafka", "localhost:9092,kafka-2");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly("--kafka: 'kafka-2' is not HOST:PORT");
    }

    @Test
    void aMalformedMetricsAddressExitsWith2() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters: [{id: demo-a, manifests: " + folder + "}]");
        Run r = run(
                new WatcherCommand(),
                "--fleet",
                fleet.toString(),
                "--kafka",
                "127.0.0.1:1",
                "--metrics-bind-address",
                "9470");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly("--metrics-bind-address: '9470' is not HOST:PORT or off");
    }

    @Test
    void aManifestFileLimitOutOfRangeExitsWith2() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters: [{id: demo-a, manifests: " + folder + "}]");
        Run r = run(
                new WatcherCommand(),
                "--fleet",
                fleet.toString(),
                "--kafka",
                "127.0.0.1:1",
                "--max-file-size",
                "70000");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly("--max-file-size: 70000 is out of range (1-65536 MiB)");
    }

    @Test
    @RequiresKafka
    void publishesUntilStoppedAndPicksUpChangedSettings() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Files.writeString(
                folder.resolve("svc.yaml"), "kind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}");
        Files.writeString(
                folder.resolve("bad.yaml"), "kind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 0}]}");
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters:\n  - id: demo-a\n    manifests: demo-a\n");
        String topic = KafkaTestBroker.newTopic("cli");
        WatcherCommand cmd = new WatcherCommand();
        AtomicInteger exit = new AtomicInteger(-1);
        Thread t = new Thread(() -> exit.set(run(
                        cmd,
                        "--fleet",
                        fleet.toString(),
                        "--kafka",
                        KafkaTestBroker.bootstrap(),
                        "--topic",
                        topic,
                        "--stats-interval",
                        "1",
                        "--metrics-bind-address",
                        "127.0.0.1:0")
                .exit()));
        t.start();
        try {
            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic,
                    r -> KafkaTestBroker.events(r).stream().anyMatch(e -> e instanceof ClusterEvent.ProblemSync)));
            String bad = folder.resolve("bad.yaml").toString();
            assertThat(Events.described(got))
                    .containsExactly(
                            "listing",
                            "settings [IPV4]",
                            "problems " + bad + " [Service default/bad spec.ports[0].port]",
                            "upsert Service default/web",
                            "sync Service [default/web]",
                            "sync EndpointSlice []",
                            "sync Node []",
                            "problem-sync [" + bad + "]");

            // The refused object is a metric (the server starts right after the watcher: wait for its port).
            await("the metrics server's port").atMost(Duration.ofSeconds(30)).until(() -> cmd.metricsPort() >= 0);
            HttpResponse<String> metrics = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cmd.metricsPort() + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body())
                    .contains(
                            "rulesync_watcher_refused_objects{cluster=\"demo-a\"} 1.0",
                            "rulesync_watcher_problem_reports_total{cluster=\"demo-a\"} 1.0",
                            "rulesync_watcher_events_published_total");

            Files.writeString(
                    fleet,
                    "clusters:\n  - id: demo-a\n    manifests: demo-a\n"
                            + "    settings: {families: [ipv4, ipv6], masqueradeAll: true}\n");
            List<ClusterEvent> after = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic,
                    r -> KafkaTestBroker.events(r).stream()
                                    .filter(e -> e instanceof SettingsChanged)
                                    .count()
                            == 2));
            SettingsChanged last = (SettingsChanged) after.stream()
                    .filter(e -> e instanceof SettingsChanged)
                    .reduce((a, b) -> b)
                    .orElseThrow();
            assertThat(last.settings().masqueradeAll()).isTrue();
            assertThat(last.settings().families()).hasSize(2);
        } finally {
            cmd.stop();
            t.join(60_000);
        }
        assertThat(exit).hasValue(0);
    }
}
