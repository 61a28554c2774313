package io.rulesync.testsupport;

import io.rulesync.testing.needs.Need;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the test's own, which it may stop and start: {@code initdb} into a
 * temporary directory, listening on a free port of 127.0.0.1 with trust authentication for user
 * postgres. The shared server at 5432 is never touched. As root the server runs as the
 * {@code postgres} user (PostgreSQL refuses to run as root).
 *
 * <p>Where PostgreSQL's programs are not installed, {@link #create()} skips the calling test (fails it
 * under {@code CI=true}) with what to install, as {@code TestDatabase} does.
 */
public final class PrivatePostgres implements AutoCloseable {
    private static final long WAIT_SECONDS = 60;

    private final Path bin;
    private final Path dir;
    private final int port;
    private final boolean asPostgresUser;
    private boolean running;

    private PrivatePostgres(Path bin, Path dir, int port, boolean asPostgresUser) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.asPostgresUser = asPostgresUser;
    }

    /** A new server, initialised and running. */
    public static PrivatePostgres create() throws IOException, InterruptedException {
        Optional<Path> bin = binaries();
        new Need("PostgreSQL's initdb and pg_ctl", bin.isPresent() ? Optional.empty() : Optional.of("apt-get install postgresql"), true)
                .require();
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = Files.createTempDirectory("rulesync-private-pg-");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        PrivatePostgres pg = new PrivatePostgres(bin.get(), dir, port, root);
        try {
            if (root) {
                UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
                Files.setOwner(dir, users.lookupPrincipalByName("postgres"));
            }
            pg.run("initdb", "-D", dir.resolve("data").toString(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
                    "--no-sync");
            pg.start();
            return pg;
        } catch (IOException | InterruptedException | RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    public String url(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    public int port() {
        return port;
    }

    /** Stops the server ({@code pg_ctl stop -m fast}: connections are closed, as in a restart or failover). */
    public void stop() throws IOException, InterruptedException {
        run("pg_ctl", "-D", dir.resolve("data").toString(), "-m", "fast", "-w", "-t", Long.toString(WAIT_SECONDS), "stop");
        running = false;
    }

    /** Starts it again, on the same port and data. */
    public void start() throws IOException, InterruptedException {
        run("pg_ctl", "-D", dir.resolve("data").toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t",
                Long.toString(WAIT_SECONDS), "-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off", "start");
        running = true;
    }

    @Override
    public void close() {
        try {
            if (running) {
                stop();
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            // Deleting the directory below still takes the data; the server exits when it finds it gone.
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not delete " + dir, e);
        }
    }

    private void run(String program, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if (asPostgresUser) {
            command.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        command.add(bin.resolve(program).toString());
        command.addAll(List.of(args));
        Path output = Files.createTempFile("rulesync-private-pg-", ".out");
        try {
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(output.toFile())
                    .start();
            if (!p.waitFor(WAIT_SECONDS + 30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + ": no answer in " + (WAIT_SECONDS + 30) + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited with " + p.exitValue() + ":\n"
                        + Files.readString(output));
            }
        } finally {
            Files.deleteIfExists(output);
        }
    }

    /** The directory holding initdb and pg_ctl: the PATH's, else the newest of Debian's {@code /usr/lib/postgresql/N/bin}. */
    private static Optional<Path> binaries() throws IOException {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, "initdb")) && Files.isExecutable(Path.of(d, "pg_ctl"))) {
                return Optional.of(Path.of(d));
            }
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(debian)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(debian)) {
            return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparingInt(b -> Integer.parseInt(b.getParent().getFileName().toString().replaceAll("\\D", "0"))));
        }
    }
}
