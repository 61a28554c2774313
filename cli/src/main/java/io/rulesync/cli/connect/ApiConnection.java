package io.rulesync.cli.connect;

import io.rulesync.client.ApiClient;
import io.rulesync.client.tls.TrustRoots;
import io.rulesync.model.event.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * The api as the command line talks to it, through the client the node agent uses too ({@link ApiClient}: the address,
 * the bearer token, paths and their encoding): one request per call, and every way it can go wrong turned into a
 * {@link CliFailure} whose message is one readable line (the api's problem detail, or why it could not be reached) and
 * whose exit code says which kind of failure it was. No retries: an operator is told at once.
 */
public final class ApiConnection {
    private static final Duration CONNECT = Duration.ofSeconds(5);
    /** A rollback waits up to 10 s for the compiler before the api answers 202. */
    private static final Duration ANSWER = Duration.ofSeconds(30);

    private final Credentials credentials;
    private final ApiClient client;

    public ApiConnection(Credentials credentials) {
        this(credentials, null);
    }

    /** @param roots what an https api's certificate is verified by; null: the Java runtime's roots */
    public ApiConnection(Credentials credentials, TrustRoots roots) {
        this.credentials = credentials;
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(CONNECT);
        if (roots != null) {
            http.sslContext(roots.sslContext());
        }
        this.client = new ApiClient(URI.create(credentials.api()), credentials.token(), http.build());
    }

    /** An answer the api gave with a 2xx status. */
    public record Answer(int status, String body) {
        public JsonNode json() {
            try {
                return Json.MAPPER.readTree(body);
            } catch (JacksonException e) {
                throw new CliFailure(
                        ExitCode.REFUSED,
                        "the api answered something that is not JSON: "
                                + body.lines().findFirst().orElse("").strip());
            }
        }
    }

    public Answer get(String path) {
        return send("GET", path, null);
    }

    public Answer post(String path, Object body) {
        return send("POST", path, Json.MAPPER.writeValueAsString(body));
    }

    public Answer put(String path, Object body) {
        return send("PUT", path, Json.MAPPER.writeValueAsString(body));
    }

    /** POST of a body that is not JSON (a plan's manifests), of {@code contentType}. */
    public Answer post(String path, HttpRequest.BodyPublisher body, String contentType) {
        return send("POST", path, body, contentType);
    }

    /** A path segment or query value, encoded. */
    public static String encode(String s) {
        return ApiClient.encode(s);
    }

    private Answer send(String method, String path, String json) {
        return send(method, path, json == null ? null : HttpRequest.BodyPublishers.ofString(json), "application/json");
    }

    private Answer send(String method, String path, HttpRequest.BodyPublisher body, String contentType) {
        HttpRequest.Builder b = client.request(path, ANSWER).header("Accept", "application/json, text/plain");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : body);
        if (body != null) {
            b.header("Content-Type", contentType);
        }
        HttpResponse<String> r;
        try {
            r = client.http().send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpConnectTimeoutException | ConnectException e) {
            throw unreachable("nothing answers there ("
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()) + ")");
        } catch (HttpTimeoutException e) {
            throw unreachable("no answer within " + ANSWER.toSeconds() + " s");
        } catch (SSLHandshakeException e) {
            throw new CliFailure(
                    ExitCode.UNREACHABLE,
                    "the api at " + credentials.api() + " is not trusted: its certificate could not be " + "verified ("
                            + e.getMessage() + "); give the CA that signed it with --ca-file or RULESYNC_CA_FILE");
        } catch (IOException e) {
            throw unreachable(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unreachable("interrupted");
        }
        if (r.statusCode() / 100 == 2) {
            return new Answer(r.statusCode(), r.body());
        }
        throw refusal(r.statusCode(), r.body());
    }

    private CliFailure unreachable(String why) {
        return new CliFailure(
                ExitCode.UNREACHABLE,
                "cannot reach the api at " + credentials.api() + ": " + why + " (set --api or RULESYNC_API)");
    }

    /** The api's problem detail as one line: {@code 409 Conflict: cluster 'shop' has a pending rollback ...}. */
    private CliFailure refusal(int status, String body) {
        String title = null;
        String detail = null;
        try {
            JsonNode p = Json.MAPPER.readTree(body);
            title = p.path("title").asString(null);
            detail = p.path("detail").asString(null);
        } catch (JacksonException | IllegalArgumentException e) {
            detail = body.lines().findFirst().orElse("").strip();
        }
        String line =
                status + (title == null ? "" : " " + title) + (detail == null || detail.isEmpty() ? "" : ": " + detail);
        line = line.replaceAll("\\s*[\\r\\n]+\\s*", " ");
        if (status == 401) {
            line += credentials.token() == null
                    ? " (no token: " + credentials.whereTokensComeFrom() + ")"
                    : " (the token is not accepted)";
        }
        int code = status == 400
                ? ExitCode.USAGE
                : status == 503 || status == 502 || status == 504 ? ExitCode.UNREACHABLE : ExitCode.REFUSED;
        return new CliFailure(code, line);
    }
}
