package io.rulesync.compiler.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Assumptions;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A database of its own for one test class on the local PostgreSQL (127.0.0.1:5432, user postgres),
 * migrated with the real Flyway scripts, and dropped afterwards. Nothing else on the server is
 * touched. Skips (printing why) when no PostgreSQL answers.
 */
public final class TestDatabase implements AutoCloseable {
    static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";
    private final String name;
    private final PGSimpleDataSource dataSource;

    private TestDatabase(String name) {
        this.name = name;
        this.dataSource = new PGSimpleDataSource();
        dataSource.setUrl(SERVER + name);
        dataSource.setUser("postgres");
    }

    public static Optional<String> unavailableReason() {
        try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "")) {
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of("no PostgreSQL at 127.0.0.1:5432 (" + e.getMessage() + ")");
        }
    }

    /** A fresh, migrated database; skips the calling test when PostgreSQL is not there. */
    public static TestDatabase create() {
        Optional<String> reason = unavailableReason();
        if (reason.isPresent()) {
            System.out.println("skipped: " + reason.get());
            Assumptions.assumeTrue(false, reason.get());
        }
        String name = "rulesync_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        admin("CREATE DATABASE " + name);
        TestDatabase db = new TestDatabase(name);
        Flyway.configure().dataSource(db.dataSource).load().migrate();
        return db;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public String url() {
        return SERVER + name;
    }

    public long count(String table) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }

    private static void admin(String sql) {
        try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "");
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }
}
