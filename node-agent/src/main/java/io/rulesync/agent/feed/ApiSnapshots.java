package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesSnapshot;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/** Snapshots from the api role: {@code GET /api/v1/clusters/{c}/versions/{v}/snapshot?node=N}. */
public final class ApiSnapshots implements SnapshotSource {
    private final URI base;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** {@code token} may be null: sent as a bearer token when the api asks for one. */
    public ApiSnapshots(URI base, String token) {
        this.base = Objects.requireNonNull(base, "base");
        this.token = token;
    }

    @Override
    public RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException {
        return fetch(cluster, node, "latest");
    }

    @Override
    public RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException {
        return fetch(cluster, node, Long.toString(version));
    }

    private RulesSnapshot fetch(String cluster, String node, String version) throws SnapshotUnavailableException {
        String path = "api/v1/clusters/" + enc(cluster) + "/versions/" + version + "/snapshot?node=" + enc(node);
        URI uri = base.resolve(base.getPath().endsWith("/") ? path : "/" + path);
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).header("Accept", "application/json");
        if (token != null) {
            req.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> resp = http.send(req.GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (resp.statusCode() != 200) {
                throw new SnapshotUnavailableException("GET " + uri + ": HTTP " + resp.statusCode() + " " + abbreviate(resp.body()));
            }
            RulesSnapshot s = RulesSnapshot.fromJson(resp.body());
            if (!s.cluster().equals(cluster)) {
                throw new SnapshotUnavailableException("GET " + uri + " answered for cluster " + s.cluster());
            }
            return s;
        } catch (IOException | IllegalArgumentException e) {
            throw new SnapshotUnavailableException("GET " + uri + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnapshotUnavailableException("interrupted while fetching " + uri, e);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
