package io.rulesync.launcher.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The demo stopped and started again on the same database, as a newcomer does: each run has a new
 * in-process broker whose topics start at offset 0, while PostgreSQL remembers the old broker's
 * positions. The second run must notice that its log is another one, and then lose nothing: an edit
 * becomes a version within the usual time, and a rollback requested through the api completes.
 */
class DemoRestartTest {
    private static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";
    private static final Duration DEADLINE = Duration.ofSeconds(120);

    @TempDir
    Path dir;

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

    /** One run of the demo, in the background, with its output. */
    private final class Run implements AutoCloseable {
        final StringWriter out = new StringWriter();
        final DemoCommand demo;
        final Future<Integer> exit;
        final ExecutorService exec = Executors.newSingleThreadExecutor();
        final CountDownLatch started = new CountDownLatch(1);

        Run(String db) throws InterruptedException {
            demo = new DemoCommand(Map.of("RULESYNC_DB_URL", SERVER + db));
            CommandLine cmd = new CommandLine(demo);
            cmd.setOut(new PrintWriter(out, true));
            cmd.setErr(new PrintWriter(out, true));
            demo.onStarted(started::countDown);
            exit = exec.submit(() -> cmd.execute("--fleet", dir.resolve("fleet.yaml").toString(), "--api-port=0",
                    "--rules-dir=" + dir.resolve("rules")));
            assertThat(started.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("the demo started:\n%s", out).isTrue();
        }

        String output() {
            return out.toString();
        }

        /** Waits for {@code text} after position {@code from} of the output. */
        void await(int from, String text) throws InterruptedException {
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (!output().substring(from).contains(text)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no '" + text + "' in the demo's output:\n" + output().substring(from));
                }
                Thread.sleep(50);
            }
        }

        String find(String regex) {
            Matcher m = Pattern.compile(regex).matcher(output());
            assertThat(m.find()).as("'%s' in the demo's output:\n%s", regex, output()).isTrue();
            return m.group(1);
        }

        @Override
        public void close() throws Exception {
            demo.stop();
            assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
            exec.shutdownNow();
        }
    }

    private static long queryLong(String db, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SERVER + db, "postgres", ""); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aRestartedDemoTurnsAnEditIntoAVersionAndCarriesOutARollback() throws Exception {
        try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "")) {
            // reachable
        } catch (SQLException e) {
            System.out.println("DemoRestartTest skipped: no PostgreSQL at 127.0.0.1:5432");
            Assumptions.assumeTrue(false, "no PostgreSQL at 127.0.0.1:5432");
        }
        copy(Path.of("../examples"), dir);
        String db = "rulesync_demo_restart_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        admin("CREATE DATABASE " + db);
        try {
            try (Run first = new Run(db)) {
                first.await(0, "shop     node-a   applied version");
                first.await(0, "edge     edge-1   applied version");
            }
            long shopHead = queryLong(db, "SELECT seq FROM cluster_head WHERE cluster = 'shop'");

            try (Run second = new Run(db)) {
                assertThat(second.output()).contains("history kept from earlier runs");
                // The new broker's log is another one: every position was reset, in a new epoch.
                assertThat(queryLong(db, "SELECT min(log_epoch) FROM consumer_position")).isPositive();
                second.await(0, "shop     node-a   applied version");
                int before = second.output().length();

                Path web = dir.resolve("shop/web.yaml");
                Files.writeString(web, Files.readString(web).replace("- {addresses: [10.244.1.12], nodeName: node-b}",
                        "- {addresses: [10.244.1.12], nodeName: node-b}\n- {addresses: [10.244.1.77], nodeName: node-b}"));
                second.await(before, "EndpointSlice shop/web-7xk2p");
                second.await(before, "shop     node-a   applied version");
                long deadline = System.nanoTime() + DEADLINE.toNanos();
                while (!Files.readString(dir.resolve("rules/node-a-ipv4.rules")).contains("10.244.1.77:8080")) {
                    assertThat(System.nanoTime()).as("node-a's rules show the edit").isLessThan(deadline);
                    Thread.sleep(50);
                }
                long edited = queryLong(db, "SELECT seq FROM cluster_head WHERE cluster = 'shop'");
                assertThat(edited).isGreaterThan(shopHead);

                // A rollback requested after the restart is carried out (its event is not dropped below a stale position).
                String api = second.find("api at (http://127\\.0\\.0\\.1:[0-9]+)/api/v1/clusters");
                String operator = second.find("operator (rs_[A-Za-z0-9_-]+)");
                HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                URI.create(api + "/api/v1/clusters/shop/rollback"))
                        .header("Authorization", "Bearer " + operator).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"toVersion\": " + shopHead + ", \"reason\": \"undo the edit\"}"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).contains("\"status\":\"done\"").contains("\"version\":" + (edited + 1));
                second.await(before, "rollback to v" + shopHead + " by demo-operator (undo the edit)");
                assertThat(queryLong(db, "SELECT count(*) FROM operator_action WHERE status = 'pending'")).isZero();
            }
        } finally {
            admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
        }
    }
}
