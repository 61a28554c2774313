package io.rulesync.agent.feed;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * The api as an agent reaches it: its address, the agent's bearer token, and one HTTP client (a connection pool)
 * for snapshots, deltas and acks. Agents in one process (a dry-run fleet, a benchmark) may share the client.
 */
public final class ApiConnection {
    private final URI base;
    private final String token;
    private final HttpClient http;

    /** {@code token} may be null: sent as a bearer token when the api asks for one. */
    public ApiConnection(URI base, String token, HttpClient http) {
        this.base = Objects.requireNonNull(base, "base");
        this.token = token;
        this.http = Objects.requireNonNull(http, "http");
    }

    public ApiConnection(URI base, String token) {
        this(base, token, newClient());
    }

    public static HttpClient newClient() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    public HttpClient http() {
        return http;
    }

    /** A request for {@code path} under {@code /api/v1/clusters/{cluster}/}, with the token. */
    public HttpRequest.Builder request(String cluster, String path, Duration timeout) {
        String p = "api/v1/clusters/" + encode(cluster) + "/" + path;
        URI uri = base.resolve(base.getPath().endsWith("/") ? p : "/" + p);
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout);
        if (token != null) {
            req.header("Authorization", "Bearer " + token);
        }
        return req;
    }

    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A response body for a message: at most 300 characters. */
    public static String abbreviate(String s) {
        return s == null ? "" : s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
