package io.rulesync.store;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The version store's connection, as every role that reads or writes it takes it
 * ({@code @Mixin}): compiler, api, render. The password never comes from the command line, which
 * every local user can read ({@code ps}, {@code /proc/PID/cmdline}): it is read from a file that
 * only its owner (and group) may read, or from the environment.
 */
public final class DatabaseOptions {
    /** The password, when no file is named. */
    public static final String ENV_PASSWORD = "RULESYNC_DB_PASSWORD";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec spec;

    @Option(
            names = "--db-url",
            required = true,
            paramLabel = "JDBC_URL",
            description = "The version store's PostgreSQL, e.g. jdbc:postgresql://127.0.0.1:5432/rulesync.")
    private String url;

    @Option(names = "--db-user", defaultValue = "postgres", description = "Default: ${DEFAULT-VALUE}.")
    private String user;

    /** Set in the same process (the demo), where no process list shows it; wins over the file and the environment. */
    private String given;

    @Option(
            names = "--db-password-file",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_DB_PASSWORD_FILE}",
            description =
                    "The database password: the first line of FILE, which other users must not be able to read "
                            + "(chmod 600 or 640). Default: $RULESYNC_DB_PASSWORD_FILE; without a file, the environment variable "
                            + "RULESYNC_DB_PASSWORD, else empty. There is no --db-password: other local users can read a command line.")
    private String passwordFile;

    @Option(names = "--db-password", hidden = true, paramLabel = "PASSWORD")
    void refusePassword(String ignored) {
        throw new ParameterException(
                spec.commandLine(),
                "--db-password is not taken: other local users can read a command line. "
                        + "Give the password in the environment variable " + ENV_PASSWORD
                        + ", or in a file only you can read with "
                        + "--db-password-file FILE.");
    }

    public String url() {
        return url;
    }

    public String user() {
        return user;
    }

    /**
     * The password: given in process, else the file's, else {@value #ENV_PASSWORD}'s, else empty.
     * The file is read here, when the role starts, not while options are parsed ({@code --help}).
     *
     * @throws ParameterException naming the option when the file cannot be used
     */
    public String password() {
        if (given != null) {
            return given;
        }
        if (passwordFile != null && !passwordFile.isBlank()) {
            try {
                return readSecret(Path.of(passwordFile));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(
                        spec.commandLine(), "--db-password-file " + passwordFile + ": " + e.getMessage());
            }
        }
        return Objects.requireNonNullElse(System.getenv(ENV_PASSWORD), "");
    }

    /** For a caller in the same process (the demo, tests): the password itself, which then shows in no command line. */
    public DatabaseOptions usePassword(String password) {
        this.given = Objects.requireNonNull(password, "password");
        return this;
    }

    /** Spring Boot's datasource properties for this connection. */
    public Map<String, Object> springProperties() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.datasource.url", url());
        p.put("spring.datasource.username", user());
        p.put("spring.datasource.password", password());
        return p;
    }

    private static String readSecret(Path file) {
        return SecretFile.read(file);
    }
}
