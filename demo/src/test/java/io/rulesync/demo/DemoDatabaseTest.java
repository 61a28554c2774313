package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.demo.DemoDatabase.DatabaseUnavailableException;
import io.rulesync.demo.DemoDatabase.Source;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.Tiers;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Exercises every branch of {@link DemoDatabase#choose}. The branches that need the local PostgreSQL
 * on 127.0.0.1:5432 (trust authentication for user postgres, as {@code .ci/run} sets up) declare it.
 */
class DemoDatabaseTest {
    private static final InetSocketAddress LOCAL = DemoDatabase.LOCAL_SERVER;

    @Test
    @RequiresPostgres(local = true)
    void environmentUrlWinsOverEverythingElse() throws Exception {
        Map<String, String> env = Map.of(DemoDatabase.ENV_URL, "jdbc:postgresql://127.0.0.1:5432/postgres");

        // A probe target that refuses and no embedded server: only the URL can have been used.
        try (DemoDatabase db = DemoDatabase.choose(env, closedPort(), false)) {
            assertThat(db.source()).isEqualTo(Source.ENVIRONMENT);
            assertThat(db.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/postgres");
            assertThat(db.user()).isEqualTo("postgres");
            assertThat(db.password()).isEmpty();
            assertThat(db.description())
                    .isEqualTo("PostgreSQL at 127.0.0.1:5432, database postgres (from RULESYNC_DB_URL)");
            assertThat(currentDatabase(db)).isEqualTo("postgres");
        }
    }

    @Test
    @RequiresPostgres(local = true)
    void environmentUserAndPasswordOverrideTheDefaults() throws Exception {
        Map<String, String> env = Map.of(
                DemoDatabase.ENV_URL, "jdbc:postgresql://127.0.0.1:5432/postgres",
                DemoDatabase.ENV_USER, "postgres",
                DemoDatabase.ENV_PASSWORD, "ignored-by-trust-auth");
        try (DemoDatabase db = DemoDatabase.choose(env, closedPort(), false)) {
            assertThat(db.user()).isEqualTo("postgres");
            assertThat(db.password()).isEqualTo("ignored-by-trust-auth");
            assertThat(db.description()).doesNotContain("ignored-by-trust-auth");
        }
    }

    @Test
    void anEnvironmentUrlThatDoesNotWorkIsReportedNotSkipped() throws Exception {
        InetSocketAddress closed = closedPort();
        Map<String, String> env =
                Map.of(DemoDatabase.ENV_URL, "jdbc:postgresql://127.0.0.1:" + closed.getPort() + "/rulesync");

        assertThatThrownBy(() -> DemoDatabase.choose(env, LOCAL, true))
                .isInstanceOf(DatabaseUnavailableException.class)
                .hasMessageStartingWith("RULESYNC_DB_URL points at 127.0.0.1:" + closed.getPort()
                        + ", database rulesync, which refused user postgres (")
                .hasMessageEndingWith("): fix RULESYNC_DB_URL (or RULESYNC_DB_USER and RULESYNC_DB_PASSWORD),"
                        + " or unset it to use a local or embedded PostgreSQL.")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));

        assertThatThrownBy(() -> DemoDatabase.choose(
                        Map.of(DemoDatabase.ENV_URL, "postgres://h/db?password=secret"), LOCAL, true))
                .isInstanceOf(DatabaseUnavailableException.class)
                .hasMessage(
                        "RULESYNC_DB_URL must be a PostgreSQL JDBC URL such as jdbc:postgresql://host:5432/rulesync,"
                                + " but it is 'postgres://h/db?password=***'.");
    }

    @Test
    @RequiresPostgres(local = true)
    void aLocalServerIsUsedWithItsOwnDemoDatabase() throws Exception {
        try (DemoDatabase db = DemoDatabase.choose(Map.of(), LOCAL, false)) {
            assertThat(db.source()).isEqualTo(Source.LOCAL_SERVER);
            assertThat(db.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/rulesync_demo");
            assertThat(db.user()).isEqualTo("postgres");
            assertThat(db.description()).isEqualTo("PostgreSQL at 127.0.0.1:5432, database rulesync_demo");
            assertThat(currentDatabase(db)).isEqualTo("rulesync_demo");
        }
        // The second time the database exists already.
        try (DemoDatabase again = DemoDatabase.choose(Map.of(), LOCAL, false)) {
            assertThat(currentDatabase(again)).isEqualTo("rulesync_demo");
        }
    }

    @Test
    @Tag(Tiers.INTEGRATION)
    void anEmbeddedServerStartsWhenNothingAnswers() throws Exception {
        int port;
        try (DemoDatabase db = DemoDatabase.choose(Map.of(), closedPort(), true)) {
            assertThat(db.source()).isEqualTo(Source.EMBEDDED);
            assertThat(db.jdbcUrl()).matches("jdbc:postgresql://127\\.0\\.0\\.1:\\d+/rulesync_demo");
            assertThat(db.user()).isEqualTo("postgres");
            assertThat(db.password()).isEmpty();
            assertThat(db.description())
                    .matches(
                            "embedded PostgreSQL 17\\.\\d+ at 127\\.0\\.0\\.1:\\d+, database rulesync_demo \\(deleted on exit\\)");
            assertThat(currentDatabase(db)).isEqualTo("rulesync_demo");
            try (Connection c = db.connect();
                    Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (x int)");
                s.execute("INSERT INTO t VALUES (42)");
                try (ResultSet rs = s.executeQuery("SELECT x FROM t")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(42);
                }
            }
            port = Integer.parseInt(db.jdbcUrl().replaceAll(".*:(\\d+)/.*", "$1"));
            db.close();
            db.close(); // idempotent
        }
        assertThat(accepts(port)).as("embedded server stopped").isFalse();
    }

    @Test
    void oneSentenceSaysWhatToSetWhenNothingCanStart() {
        InetSocketAddress closed = closedPort();

        assertThatThrownBy(() -> DemoDatabase.choose(Map.of(), closed, false))
                .isInstanceOf(DatabaseUnavailableException.class)
                .hasMessage(
                        "No PostgreSQL found: set RULESYNC_DB_URL to a JDBC URL (e.g. jdbc:postgresql://host:5432/rulesync),"
                                + " or start PostgreSQL on 127.0.0.1:" + closed.getPort() + ".");
    }

    @Test
    void aServerThatAnswersButRefusesIsNamedInTheSentence() throws Exception {
        // Something listens, but it is not a PostgreSQL that lets us in: it hangs up at once.
        try (ServerSocket impostor = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            Thread hangUp = new Thread(() -> {
                while (!impostor.isClosed()) {
                    try (Socket s = impostor.accept()) {
                        // close immediately
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            hangUp.setDaemon(true);
            hangUp.start();
            InetSocketAddress target = new InetSocketAddress("127.0.0.1", impostor.getLocalPort());

            assertThatThrownBy(() -> DemoDatabase.choose(Map.of(), target, false))
                    .isInstanceOf(DatabaseUnavailableException.class)
                    .hasMessageStartingWith(
                            "PostgreSQL on 127.0.0.1:" + impostor.getLocalPort() + " refused user postgres (")
                    .hasMessageEndingWith(
                            "): set RULESYNC_DB_USER and RULESYNC_DB_PASSWORD, or RULESYNC_DB_URL to a JDBC URL"
                                    + " (e.g. jdbc:postgresql://host:5432/rulesync).")
                    .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static String currentDatabase(DemoDatabase db) throws SQLException {
        try (Connection c = db.connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_database()")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A loopback port nothing listens on (it was free a moment ago). */
    private static InetSocketAddress closedPort() {
        try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            return new InetSocketAddress("127.0.0.1", socket.getLocalPort());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
