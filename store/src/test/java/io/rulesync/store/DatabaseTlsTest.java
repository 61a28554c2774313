package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.testing.tiers.Tiers;
import io.rulesync.testsupport.PrivatePostgres;
import io.rulesync.testsupport.tls.TestPki;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.util.PSQLException;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * What the deployment's {@code --db-url ...?sslmode=verify-full&sslrootcert=CA} buys, against a PostgreSQL server of
 * the test's own that speaks TLS with a certificate the test made: the server is reached only when its certificate
 * chains to the given CA and names the host the URL names. {@code sslmode=require} would also take a stranger's
 * certificate (a man in the middle's), which is why the manifests say verify-full.
 *
 * <p>Every connection goes the roles' way: {@code --db-url} parsed by {@link DatabaseOptions}, its
 * {@link DatabaseOptions#springProperties()} turned into a Hikari pool by Spring Boot's own auto-configuration.
 */
@Tag(Tiers.INTEGRATION)
class DatabaseTlsTest {
    @TempDir
    static Path dir;

    private static TestPki pki;
    private static TestPki.Issued localhost;
    private static PrivatePostgres pg;

    @BeforeAll
    static void serverWithTls() throws Exception {
        pki = TestPki.create(dir, "pg");
        localhost = pki.localhost("postgres"); // DNS localhost, IP 127.0.0.1
        pg = PrivatePostgres.createWithTls(localhost);
        try (Role role = Role.connect(verifyFull(pki.caFile()));
                Connection c = role.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE probe (note text NOT NULL)");
        }
    }

    @AfterAll
    static void stopServer() {
        if (pg != null) {
            pg.close();
        }
    }

    @Test
    void verifyFullWithTheServersCaConnectsOverTls() throws Exception {
        assertThat(overTls(verifyFull(pki.caFile()))).isTrue();
    }

    @Test
    void verifyFullRefusesACertificateFromAnotherCaWhereRequireTakesIt() throws Exception {
        Path strangersCa = TestPki.create(dir.resolve("stranger"), "stranger").caFile();
        List<String> before = probeRows();

        assertThatThrownBy(() -> write(verifyFull(strangersCa), "through a server the stranger's CA vouches for"))
                .isInstanceOf(PSQLException.class)
                .hasMessageContaining("SSL error")
                .hasMessageContaining("unable to find valid certification path to requested target");
        assertThat(probeRows()).isEqualTo(before);

        // require encrypts but verifies nothing: the same stranger's CA, and the connection (and its write) goes
        // through.
        String require =
                "jdbc:postgresql://localhost:" + pg.port() + "/postgres?sslmode=require&sslrootcert=" + strangersCa;
        assertThat(overTls(require)).isTrue();
        write(require, "through sslmode=require");
        assertThat(probeRows()).containsExactlyInAnyOrderElementsOf(with(before, "through sslmode=require"));
    }

    @Test
    void verifyFullRefusesACertificateForAnotherHostName() throws Exception {
        // Issued by the right CA, for another name: what any server holding a certificate from the same CA could show.
        TestPki.Issued other = pki.server("db.other.example", List.of("db.other.example"), List.of());
        List<String> before = probeRows();
        pg.serveCertificate(other);
        try {
            assertThatThrownBy(() -> write(verifyFull(pki.caFile()), "through a server named db.other.example"))
                    .isInstanceOf(PSQLException.class)
                    .hasMessageContaining("The hostname localhost could not be verified");
        } finally {
            pg.serveCertificate(localhost);
        }
        assertThat(probeRows()).isEqualTo(before);
    }

    @Test
    void thePlainConnectionIsRefusedByTheServer() throws Exception {
        List<String> before = probeRows();
        assertThatThrownBy(() -> write(
                        "jdbc:postgresql://localhost:" + pg.port() + "/postgres?sslmode=disable", "in plain text"))
                .isInstanceOf(PSQLException.class)
                .hasMessageContaining("pg_hba.conf rejects connection")
                .hasMessageContaining("no encryption");
        assertThat(probeRows()).isEqualTo(before);
    }

    private static String verifyFull(Path caFile) {
        return "jdbc:postgresql://localhost:" + pg.port() + "/postgres?sslmode=verify-full&sslrootcert=" + caFile;
    }

    /** Whether the server says this connection is encrypted. */
    private static boolean overTls(String url) throws SQLException {
        try (Role role = Role.connect(url);
                Connection c = role.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
            assertThat(rs.next()).isTrue();
            return rs.getBoolean("ssl");
        }
    }

    /** Inserts {@code note} into the probe table over a connection made from {@code url}. */
    private static void write(String url, String note) throws SQLException {
        try (Role role = Role.connect(url);
                Connection c = role.dataSource().getConnection();
                var insert = c.prepareStatement("INSERT INTO probe (note) VALUES (?)")) {
            insert.setString(1, note);
            insert.executeUpdate();
        }
    }

    /** The probe table, read over a verified connection. */
    private static List<String> probeRows() throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Role role = Role.connect(verifyFull(pki.caFile()));
                Connection c = role.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT note FROM probe")) {
            while (rs.next()) {
                rows.add(rs.getString(1));
            }
        }
        return rows;
    }

    private static List<String> with(List<String> rows, String row) {
        List<String> out = new ArrayList<>(rows);
        out.add(row);
        return out;
    }

    /** A role's database connection, made as the compiler and the api make theirs, and nothing else of the role. */
    private record Role(ConfigurableApplicationContext context) implements AutoCloseable {
        @Command(name = "role")
        static final class Options {
            @Mixin
            DatabaseOptions db;
        }

        static Role connect(String dbUrl) {
            Options options = new Options();
            new CommandLine(options).parseArgs("--db-url", dbUrl);
            options.db.usePassword(""); // the private server trusts 127.0.0.1; the certificate is what is under test
            return new Role(new SpringApplicationBuilder(DataSourceOnly.class)
                    .web(WebApplicationType.NONE)
                    .properties(options.db.springProperties())
                    .properties("spring.main.banner-mode=off", "spring.main.log-startup-info=false")
                    .run());
        }

        DataSource dataSource() {
            return context.getBean(DataSource.class);
        }

        @Override
        public void close() {
            context.close();
        }
    }

    /** Spring Boot's DataSource auto-configuration alone: the pool the roles get from {@code spring.datasource.*}. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(DataSourceAutoConfiguration.class)
    static class DataSourceOnly {}
}
