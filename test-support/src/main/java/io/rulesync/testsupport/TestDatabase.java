package io.rulesync.testsupport;

import io.rulesync.testing.needs.Need;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A database of its own for one test class, migrated with the real Flyway scripts and dropped
 * afterwards, on the server {@link TestInfrastructure} provides (the local PostgreSQL at
 * 127.0.0.1:5432, or a container where Docker runs). Nothing else on the server is touched.
 * Tests that use it declare {@code @RequiresPostgres}; should no PostgreSQL answer all the same,
 * {@link #create()} skips the calling test (fails it under {@code CI=true}) with the same line.
 */
public final class TestDatabase implements AutoCloseable {
    private final String name;
    private final PGSimpleDataSource dataSource;

    private TestDatabase(String name) {
        this.name = name;
        this.dataSource = new PGSimpleDataSource();
        String[] server = TestInfrastructure.postgresServer();
        dataSource.setUrl(server[0] + name);
        dataSource.setUser(server[1]);
        dataSource.setPassword(server[2]);
    }

    /** Why no test database can be created ({@code needs PostgreSQL ...: how to get it}), or empty. */
    public static Optional<String> unavailableReason() {
        Need local = Need.localPostgres();
        return TestInfrastructure.containers() || local.met() ? Optional.empty() : Optional.of(local.message());
    }

    /** A fresh, migrated database; skips the calling test (under CI=true: fails it) when PostgreSQL is not there. */
    public static TestDatabase create() {
        return create("");
    }

    /**
     * As {@link #create()}, with {@code CREATE DATABASE} options: e.g. a collation other than the server's default, for a
     * test that must hold whatever locale the host's PostgreSQL was initialised with.
     */
    public static TestDatabase create(String options) {
        if (!TestInfrastructure.containers()) {
            Need.localPostgres().require();
        }
        String name =
                "rulesync_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        admin("CREATE DATABASE " + name + (options.isEmpty() ? "" : " " + options));
        TestDatabase db = new TestDatabase(name);
        Flyway.configure().dataSource(db.dataSource).load().migrate();
        return db;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public String url() {
        return TestInfrastructure.postgresServer()[0] + name;
    }

    public String user() {
        return TestInfrastructure.postgresServer()[1];
    }

    public String password() {
        return TestInfrastructure.postgresServer()[2];
    }

    /**
     * The options that give a role this database's password as users do: a file only its owner may
     * read ({@code --db-password-file}); none when the password is empty (the local server's trust).
     */
    public List<String> passwordOptions() {
        if (password().isEmpty()) {
            return List.of();
        }
        try {
            Path file = Files.createTempFile(
                    "rulesync-db-password-",
                    ".txt",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            file.toFile().deleteOnExit();
            Files.writeString(file, password() + "\n");
            return List.of("--db-password-file", file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public long count(String table) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A backup of this database as an operator takes one: {@code pg_dump}'s custom format, into {@code file}. */
    public void dump(Path file) {
        run(List.of("pg_dump", "--format=custom", "--file=" + file, connection(name)));
    }

    /**
     * This database replaced by what {@code backup} holds, as an operator restores one: dropped (its connections ended)
     * and created again under the same name, so clients reconnect to it, then {@code pg_restore}.
     */
    public void restore(Path backup) {
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        admin("CREATE DATABASE " + name);
        run(List.of("pg_restore", "--exit-on-error", "--dbname=" + connection(name), backup.toString()));
    }

    /** A libpq connection string for {@code database} on this server. */
    private static String connection(String database) {
        String[] server = TestInfrastructure.postgresServer();
        java.net.URI uri = java.net.URI.create(server[0].substring("jdbc:".length()));
        return "postgresql://" + server[1] + (server[2].isEmpty() ? "" : ":" + server[2]) + "@" + uri.getHost() + ":"
                + uri.getPort() + "/" + database;
    }

    private static void run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(command.get(0) + " failed: " + out.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    private static void admin(String sql) {
        String[] server = TestInfrastructure.postgresServer();
        try (Connection c = DriverManager.getConnection(server[0] + "postgres", server[1], server[2]);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }
}
