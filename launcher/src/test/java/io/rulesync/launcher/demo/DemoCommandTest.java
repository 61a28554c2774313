package io.rulesync.launcher.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The one-command demo, for real: in-process Kafka, PostgreSQL (a database of its own), the
 * compiler and the watcher on a copy of the example fleet. Both clusters get a first version, and
 * editing a manifest produces the next one.
 */
@EndToEnd
@RequiresPostgres(local = true)
@RequiresKafka
class DemoCommandTest {
    @TempDir
    Path dir;

    private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";

    private static void admin(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", ""); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    private static void await(StringWriter out, String text) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!out.toString().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no '" + text + "' in the demo's output:\n" + out);
            }
            Thread.sleep(50);
        }
    }

    /** Waits until {@code text} appears in the output after position {@code from}. */
    private static void awaitAfter(StringWriter out, int from, String text) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!out.toString().substring(from).contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no '" + text + "' in the demo's output after the edit:\n" + out.toString().substring(from));
            }
            Thread.sleep(50);
        }
    }

    @Test
    void startsEverythingAndTurnsAnEditIntoANewVersion() throws Exception {
        Path examples = Path.of("../examples");
        copy(examples, dir);
        String db = "rulesync_demo_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        admin("CREATE DATABASE " + db);
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try {
            DemoCommand demo = new DemoCommand(Map.of("RULESYNC_DB_URL", SERVER + db));
            StringWriter out = new StringWriter();
            CommandLine cmd = new CommandLine(demo);
            cmd.setOut(new PrintWriter(out, true));
            cmd.setErr(new PrintWriter(out, true));
            CountDownLatch started = new CountDownLatch(1);
            demo.onStarted(started::countDown);
            Path rules = dir.resolve("rules");
            Future<Integer> exit = exec.submit(() -> cmd.execute("--fleet", dir.resolve("fleet.yaml").toString(), "--api-port=0",
                    "--rules-dir=" + rules));

            // The first versions may hold only the clusters' settings; the demo is started once agents run.
            await(out, "shop     v1 ");
            await(out, "edge     v1 ");
            assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
            await(out, "shop     node-a   applied version");
            await(out, "shop     node-b   applied version");
            int before = out.toString().length();

            Path web = dir.resolve("shop/web.yaml");
            Files.writeString(web, Files.readString(web).replace("- {addresses: [10.244.1.12], nodeName: node-b}",
                    "- {addresses: [10.244.1.12], nodeName: node-b}\n- {addresses: [10.244.1.99], nodeName: node-b}"));
            awaitAfter(out, before, "EndpointSlice shop/web-7xk2p");
            assertThat(out.toString().substring(before)).containsPattern("shop {5}v[0-9]+ ");
            // Every node's dry-run agent applies it; node-a's rules file then sends the web Service to the new endpoint.
            awaitAfter(out, before, "shop     node-a   applied version");
            awaitAfter(out, before, "shop     node-b   applied version");
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!Files.readString(rules.resolve("node-a-ipv4.rules")).contains("10.244.1.99:8080")) {
                assertThat(System.nanoTime()).as("node-a's rules file shows the new endpoint").isLessThan(deadline);
                Thread.sleep(50);
            }

            demo.stop();
            assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
            assertThat(out.toString()).contains("stopping");
            assertThat(out.toString().substring(before)).as("the edit touches shop only").doesNotContain("edge     v");
        } finally {
            exec.shutdownNow();
            admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }
}
