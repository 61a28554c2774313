package io.rulesync.client;

import io.rulesync.client.tls.TrustRoots;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The api's REST endpoints as its clients reach them, the node agent and the command line alike: its address, the
 * bearer token, one HTTP client (a connection pool), and paths built one way, with names encoded as a path segment or
 * query value is. Clients in one process (a dry-run fleet, a benchmark) may share the HTTP client.
 */
public final class ApiClient {
    private final URI base;
    private final Supplier<String> token;
    private final HttpClient http;

    /**
     * @param token asked for the token before each request (a {@link TokenFile} gives a renewed one); it, or what it
     *              gives, may be null: then no {@code Authorization} header is sent
     */
    public ApiClient(URI base, Supplier<String> token, HttpClient http) {
        this.base = Objects.requireNonNull(base, "base");
        this.token = token == null ? () -> null : token;
        this.http = Objects.requireNonNull(http, "http");
    }

    /** {@code token} may be null: then no {@code Authorization} header is sent. */
    public ApiClient(URI base, String token, HttpClient http) {
        this(base, () -> token, http);
    }

    public ApiClient(URI base, String token) {
        this(base, token, newHttpClient());
    }

    /** A connection pool with a 5 s connect timeout. */
    public static HttpClient newHttpClient() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** {@link #newHttpClient()} verifying the api's certificate by {@code roots}. */
    public static HttpClient newHttpClient(TrustRoots roots) {
        return HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .sslContext(roots.sslContext())
                .build();
    }

    public URI base() {
        return base;
    }

    /** The token now (a renewed one, when the file it comes from was rewritten). */
    public String token() {
        return token.get();
    }

    /** Where the token comes from: for the node stream, which sends it at each connect. */
    public Supplier<String> tokens() {
        return token;
    }

    public HttpClient http() {
        return http;
    }

    /** A request for {@code path} (from {@code /api/...}, already encoded), with the token; under the base's own path, if any. */
    public HttpRequest.Builder request(String path, Duration timeout) {
        String b = base.toString();
        URI uri = URI.create(
                (b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + (path.startsWith("/") ? path : "/" + path));
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout);
        String t = token.get();
        if (t != null) {
            req.header("Authorization", "Bearer " + t);
        }
        return req;
    }

    /** A request for {@code path} under {@code /api/v1/clusters/{cluster}/}. */
    public HttpRequest.Builder clusterRequest(String cluster, String path, Duration timeout) {
        return request("api/v1/clusters/" + encode(cluster) + "/" + path, timeout);
    }

    /** A path segment or query value, encoded (a space as {@code %20}, which both places read). */
    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A response body for a message: at most 300 characters. */
    public static String abbreviate(String s) {
        return s == null ? "" : s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
