package io.rulesync.testing.needs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;

/**
 * The local PostgreSQL that tests create their databases on, as {@code TestInfrastructure} and the
 * demo's tests address it. Checked through JDBC (the modules that need it have the driver), so that
 * a server that refuses the user counts as missing too.
 */
final class LocalPostgres {
    static final String ADDRESS = "127.0.0.1:5432";

    private LocalPostgres() {}

    static Optional<String> problem() {
        Properties login = new Properties();
        login.setProperty("user", "postgres");
        login.setProperty("password", "");
        login.setProperty("connectTimeout", "5");
        login.setProperty("loginTimeout", "10");
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + ADDRESS + "/postgres", login)) {
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of(firstSentence(e.getMessage()) + "; apt-get install postgresql and start it with trust"
                    + " authentication for local TCP (.ci/run starts it), or run Docker for Testcontainers");
        }
    }

    /**
     * Where Docker runs, {@code TestInfrastructure} starts PostgreSQL in a container instead, unless
     * {@code -Drulesync.test.infrastructure=local|containers} forces the choice. Docker is recognised
     * by its socket here; if it does not answer after all, {@code TestDatabase} falls back to the
     * local server and says what it needs.
     */
    static boolean containersWillServe() {
        String forced = System.getProperty("rulesync.test.infrastructure", "");
        if (!forced.isEmpty()) {
            return forced.equals("containers");
        }
        return System.getenv("DOCKER_HOST") != null || Files.exists(Path.of("/var/run/docker.sock"));
    }

    private static String firstSentence(String s) {
        String line = s == null ? "no answer" : s.strip().lines().findFirst().orElse("no answer");
        int end = line.indexOf(". ");
        return end < 0 ? line : line.substring(0, end);
    }
}
