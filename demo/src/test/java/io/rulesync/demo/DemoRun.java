package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import org.awaitility.Awaitility;
import picocli.CommandLine;

/**
 * One run of {@code rulesync demo} in the background, as the demo tests drive it: on a copy of the
 * example fleet in {@code dir}, a database of the test's own on the local PostgreSQL, the api on
 * any free port, the dry-run agents' rules in {@code dir/rules}. Closing it stops the demo as Ctrl-C
 * would and checks that it exited cleanly.
 */
final class DemoRun implements AutoCloseable {
    static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";
    static final Duration DEADLINE = Duration.ofSeconds(120);

    private final StringWriter out = new StringWriter();
    private final DemoCommand demo;
    private final Future<Integer> exit;
    private final ExecutorService exec = Executors.newSingleThreadExecutor();
    private final CountDownLatch started = new CountDownLatch(1);

    /** Starts the demo on {@code db}; {@link #started()} says when everything runs. */
    DemoRun(Path dir, String db) {
        demo = new DemoCommand(Map.of("RULESYNC_DB_URL", SERVER + db));
        CommandLine cmd = new CommandLine(demo);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(out, true));
        demo.onStarted(started::countDown);
        exit = exec.submit(() -> cmd.execute(
                "--fleet",
                dir.resolve("fleet.yaml").toString(),
                "--api-port=0",
                "--rules-dir=" + dir.resolve("rules")));
    }

    /** Waits until the demo says it runs (its agents have started). */
    boolean started() throws InterruptedException {
        return started.await(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }

    String output() {
        return out.toString();
    }

    /** Waits for {@code text} in the output after position {@code from}. */
    void await(int from, String text) {
        // The matcher's mismatch shows the output so far.
        Awaitility.await("'" + text + "' in the demo's output")
                .atMost(DEADLINE)
                .until(() -> output().substring(from), containsString(text));
    }

    /** The first group of {@code regex} in the output. */
    String find(String regex) {
        Matcher m = Pattern.compile(regex).matcher(output());
        assertThat(m.find())
                .as("'%s' in the demo's output:\n%s", regex, output())
                .isTrue();
        return m.group(1);
    }

    @Override
    public void close() throws Exception {
        try {
            demo.stop();
            assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
            assertThat(output()).contains("stopping");
        } finally {
            exec.shutdownNow();
        }
    }

    /** A fresh database on the local server, for one test; drop it with {@link #drop}. */
    static String createDatabase(String prefix) throws SQLException {
        String db = prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        admin("CREATE DATABASE " + db);
        return db;
    }

    static void drop(String db) throws SQLException {
        admin("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
    }

    static long queryLong(String db, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SERVER + db, "postgres", "");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void admin(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "");
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** The example fleet (../examples), copied to {@code to} so that tests may edit it. */
    static void copyExamples(Path to) throws IOException {
        Path from = Path.of("../examples");
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

    /** Waits until node-a's rules file holds {@code text}. */
    static void awaitRules(Path dir, String node, String text) throws Exception {
        Path file = dir.resolve("rules/" + node + "-ipv4.rules");
        Awaitility.await(node + "'s rules to show " + text)
                .atMost(DEADLINE)
                .until(() -> Files.exists(file) && Files.readString(file).contains(text));
    }
}
