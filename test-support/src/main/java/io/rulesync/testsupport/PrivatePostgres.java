package io.rulesync.testsupport;

import io.rulesync.testing.needs.Need;
import io.rulesync.testsupport.tls.TestPki;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
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
 * <p>With {@link #createWithTls} it speaks TLS with a certificate the test made ({@link TestPki}), and by default
 * refuses plain connections over TCP, as a production server should: what a client's {@code sslmode} does
 * against such a server can then be tested here.
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
    private final Tls tls;
    private boolean running;
    private boolean frozen;

    /**
     * TLS for a private server.
     *
     * @param certificate the server's certificate and key, e.g. {@code TestPki.localhost("postgres")}
     * @param refusePlain whether pg_hba.conf refuses connections over TCP without TLS ({@code hostnossl ... reject})
     */
    public record Tls(TestPki.Issued certificate, boolean refusePlain) {
        /** TLS, and plain connections over TCP refused. */
        public static Tls only(TestPki.Issued certificate) {
            return new Tls(certificate, true);
        }

        /** TLS offered, plain connections still taken. */
        public static Tls offered(TestPki.Issued certificate) {
            return new Tls(certificate, false);
        }
    }

    private PrivatePostgres(Path bin, Path dir, int port, boolean asPostgresUser, Tls tls) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.asPostgresUser = asPostgresUser;
        this.tls = tls;
    }

    /** A new server, initialised and running, without TLS. */
    public static PrivatePostgres create() throws IOException, InterruptedException {
        return create((Tls) null);
    }

    /** A new server that speaks TLS with {@code certificate} and refuses plain connections over TCP. */
    public static PrivatePostgres createWithTls(TestPki.Issued certificate) throws IOException, InterruptedException {
        return create(Tls.only(certificate));
    }

    /** A new server, initialised and running; with TLS as {@code tls} says, or none when it is null. */
    public static PrivatePostgres create(Tls tls) throws IOException, InterruptedException {
        Optional<Path> bin = binaries();
        new Need(
                        "PostgreSQL's initdb and pg_ctl",
                        bin.isPresent() ? Optional.empty() : Optional.of("apt-get install postgresql"),
                        true)
                .require();
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = Files.createTempDirectory("rulesync-private-pg-");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        PrivatePostgres pg = new PrivatePostgres(bin.get(), dir, port, root, tls);
        try {
            pg.giveToServer(dir);
            pg.run(
                    "initdb",
                    "-D",
                    pg.data().toString(),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync");
            if (tls != null) {
                pg.configureTls();
            }
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

    /**
     * Serves {@code certificate} from now on (e.g. one issued for another host name): replaces the server's
     * certificate and key, and restarts the server if it runs, so that every new connection gets the new one.
     */
    public void serveCertificate(TestPki.Issued certificate) throws IOException, InterruptedException {
        if (tls == null) {
            throw new IllegalStateException("this server was created without TLS; use createWithTls");
        }
        boolean wasRunning = running;
        if (wasRunning) {
            stop();
        }
        installCertificate(certificate);
        if (wasRunning) {
            start();
        }
    }

    /** Stops the server ({@code pg_ctl stop -m fast}: connections are closed, as in a restart or failover). */
    public void stop() throws IOException, InterruptedException {
        run("pg_ctl", "-D", data().toString(), "-m", "fast", "-w", "-t", Long.toString(WAIT_SECONDS), "stop");
        running = false;
    }

    /** Starts it again, on the same port and data. */
    public void start() throws IOException, InterruptedException {
        run(
                "pg_ctl",
                "-D",
                data().toString(),
                "-l",
                dir.resolve("server.log").toString(),
                "-w",
                "-t",
                Long.toString(WAIT_SECONDS),
                "-o",
                "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off",
                "start");
        running = true;
    }

    /**
     * Freezes the server with SIGSTOP, the postmaster and every backend: connections stay open and nothing answers, as
     * when packets are dropped or a host hangs. A query already sent waits for its answer.
     */
    public void freeze() throws IOException, InterruptedException {
        frozen = true; // close() thaws whatever was stopped, even if this fails half-way
        signal("STOP");
    }

    /** Lets a frozen server go on (SIGCONT), where it stopped. */
    public void thaw() throws IOException, InterruptedException {
        signal("CONT");
        frozen = false;
    }

    private void signal(String name) throws IOException, InterruptedException {
        long postmaster = Long.parseLong(
                Files.readAllLines(data().resolve("postmaster.pid")).get(0).strip());
        List<String> command = new ArrayList<>(List.of("kill", "-" + name, Long.toString(postmaster)));
        ProcessHandle.of(postmaster)
                .orElseThrow(() -> new IllegalStateException("no postmaster " + postmaster))
                .descendants()
                .forEach(p -> command.add(Long.toString(p.pid())));
        Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(kill.getInputStream().readAllBytes());
        // A backend that exited between listing and signalling is no failure: it holds nothing any more.
        boolean onlyGone = out.lines().allMatch(l -> l.contains("No such process"));
        if (!kill.waitFor(10, TimeUnit.SECONDS) || (kill.exitValue() != 0 && !onlyGone)) {
            throw new IllegalStateException(String.join(" ", command) + ": " + out);
        }
    }

    @Override
    public void close() {
        if (frozen) {
            try {
                thaw();
            } catch (IOException | InterruptedException | RuntimeException e) {
                // stopped below regardless
            }
        }
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

    private Path data() {
        return dir.resolve("data");
    }

    /**
     * {@code ssl = on} with the certificate in the data directory and, for {@link Tls#refusePlain()}, a pg_hba.conf
     * that takes TCP connections only over TLS. The Unix socket, in this server's own directory, stays trusted:
     * pg_ctl and nothing else uses it.
     */
    private void configureTls() throws IOException {
        installCertificate(tls.certificate());
        // Relative paths are the data directory's.
        Files.writeString(data().resolve("postgresql.conf"), """

                # PrivatePostgres: TLS with the test's certificate.
                ssl = on
                ssl_cert_file = 'server.crt'
                ssl_key_file = 'server.key'
                """, StandardOpenOption.APPEND);
        if (tls.refusePlain()) {
            Files.writeString(data().resolve("pg_hba.conf"), """
                    # PrivatePostgres: TCP over TLS only; a plain connection is refused before authentication.
                    local     all  all                 trust
                    hostssl   all  all  127.0.0.1/32   trust
                    hostnossl all  all  0.0.0.0/0      reject
                    """);
        }
    }

    /** Copies the certificate and key into the data directory, owned by the server's user: it refuses a key others may read. */
    private void installCertificate(TestPki.Issued certificate) throws IOException {
        Path cert = data().resolve("server.crt");
        Path key = data().resolve("server.key");
        Files.copy(certificate.certFile(), cert, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(certificate.keyFile(), key, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        giveToServer(cert);
        giveToServer(key);
    }

    /** As root, the server runs as {@code postgres}, which must own its directory and files. */
    private void giveToServer(Path file) throws IOException {
        if (asPostgresUser) {
            Files.setOwner(
                    file, file.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres"));
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
            Process p = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!p.waitFor(WAIT_SECONDS + 30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + ": no answer in " + (WAIT_SECONDS + 30) + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " exited with " + p.exitValue() + ":\n" + Files.readString(output));
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
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparingInt(b -> Integer.parseInt(
                            b.getParent().getFileName().toString().replaceAll("\\D", "0"))));
        }
    }
}
