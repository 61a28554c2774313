package io.rulesync.compiler.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine.Option;

/**
 * The version store's connection, as every role that reads or writes it takes it
 * ({@code @Mixin}): compiler, api, render. The password comes from the environment by default,
 * which keeps it out of the process list and out of files.
 */
public final class DatabaseOptions {
    @Option(names = "--db-url", required = true, paramLabel = "JDBC_URL",
            description = "The version store's PostgreSQL, e.g. jdbc:postgresql://127.0.0.1:5432/rulesync.")
    private String url;

    @Option(names = "--db-user", defaultValue = "postgres", description = "Default: ${DEFAULT-VALUE}.")
    private String user;

    @Option(names = "--db-password", defaultValue = "${env:RULESYNC_DB_PASSWORD}",
            description = "Default: the environment variable RULESYNC_DB_PASSWORD, else empty.")
    private String password;

    public String url() {
        return url;
    }

    public String user() {
        return user;
    }

    public String password() {
        return Objects.requireNonNullElse(password, "");
    }

    /** Spring Boot's datasource properties for this connection. */
    public Map<String, Object> springProperties() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("spring.datasource.url", url());
        p.put("spring.datasource.username", user());
        p.put("spring.datasource.password", password());
        return p;
    }
}
