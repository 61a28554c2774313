package io.rulesync.watcher.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WatcherCommandTest {
    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private static Run run(WatcherCommand cmd, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(cmd).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void helpDescribesTheOptions() {
        Run r = run(new WatcherCommand(), "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("Usage: watcher", "--fleet=FILE", "--kafka=HOST:PORT", "--topic=TOPIC", "--max-file-size=MIB",
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
        assertThat(r.err().lines()).containsExactly(
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
    void aManifestFileLimitOutOfRangeExitsWith2() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters: [{id: demo-a, manifests: " + folder + "}]");
        Run r = run(new WatcherCommand(), "--fleet", fleet.toString(), "--kafka", "127.0.0.1:1", "--max-file-size", "2048");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly("--max-file-size: 2048 is out of range (1-1024 MiB)");
    }

    @Test
    @RequiresKafka
    void publishesUntilStoppedAndPicksUpChangedSettings() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo-a"));
        Files.writeString(folder.resolve("svc.yaml"), "kind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}");
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(fleet, "clusters:\n  - id: demo-a\n    manifests: demo-a\n");
        String topic = KafkaTestBroker.newTopic("cli");
        WatcherCommand cmd = new WatcherCommand();
        AtomicInteger exit = new AtomicInteger(-1);
        Thread t = new Thread(() -> exit.set(run(cmd, "--fleet", fleet.toString(), "--kafka", KafkaTestBroker.bootstrap(),
                "--topic", topic, "--stats-interval", "1").exit()));
        t.start();
        try {
            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(topic,
                    r -> Events.lastMarker(KafkaTestBroker.events(r), ObjectKind.NODE).isPresent()));
            assertThat(Events.described(got)).containsExactly("settings [IPV4]", "upsert Service default/web",
                    "sync Service [default/web]", "sync EndpointSlice []", "sync Node []");

            Files.writeString(fleet, "clusters:\n  - id: demo-a\n    manifests: demo-a\n"
                    + "    settings: {families: [ipv4, ipv6], masqueradeAll: true}\n");
            List<ClusterEvent> after = KafkaTestBroker.events(KafkaTestBroker.readUntil(topic,
                    r -> KafkaTestBroker.events(r).stream().filter(e -> e instanceof SettingsChanged).count() == 2));
            SettingsChanged last = (SettingsChanged) after.stream().filter(e -> e instanceof SettingsChanged).reduce((a, b) -> b).orElseThrow();
            assertThat(last.settings().masqueradeAll()).isTrue();
            assertThat(last.settings().families()).hasSize(2);
        } finally {
            cmd.stop();
            t.join(60_000);
        }
        assertThat(exit).hasValue(0);
    }
}
