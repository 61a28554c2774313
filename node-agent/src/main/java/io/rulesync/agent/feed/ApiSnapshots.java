package io.rulesync.agent.feed;

import io.rulesync.client.ApiClient;
import io.rulesync.client.SnapshotTag;
import io.rulesync.model.rules.RulesSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.zip.GZIPInputStream;

/**
 * Snapshots from the api role: {@code GET /api/v1/clusters/{c}/versions/{v}/snapshot?node=N}. Asked for gzip (a node's
 * snapshot at 10,000 Services is ~46 MB of JSON, a few MB compressed) and parsed as it arrives, so the text is never
 * held whole; {@link #otherThan} sends the version the node runs as {@code If-None-Match}, and a 304 costs nothing.
 */
public final class ApiSnapshots implements SnapshotSource {
    private final ApiClient api;

    public ApiSnapshots(ApiClient api) {
        this.api = api;
    }

    @Override
    public RulesSnapshot latest(String cluster, String node) throws SnapshotUnavailableException {
        return fetch(cluster, node, "latest", null).orElseThrow();
    }

    @Override
    public RulesSnapshot at(String cluster, String node, long version) throws SnapshotUnavailableException {
        return fetch(cluster, node, Long.toString(version), null).orElseThrow();
    }

    @Override
    public Optional<RulesSnapshot> otherThan(String cluster, String node, long running, String lineage)
            throws SnapshotUnavailableException {
        return fetch(cluster, node, "latest", new SnapshotTag(running, lineage).header())
                .filter(s -> SnapshotSource.replaces(s, running, lineage));
    }

    /** Empty on 304 (the node runs what it would get). */
    private Optional<RulesSnapshot> fetch(String cluster, String node, String version, String ifNoneMatch)
            throws SnapshotUnavailableException {
        HttpRequest.Builder b = api.clusterRequest(
                        cluster,
                        "versions/" + version + "/snapshot?node=" + ApiClient.encode(node),
                        Duration.ofSeconds(60))
                .header("Accept", "application/json")
                .header("Accept-Encoding", "gzip");
        if (ifNoneMatch != null) {
            b.header("If-None-Match", ifNoneMatch);
        }
        HttpRequest req = b.GET().build();
        try {
            HttpResponse<InputStream> resp = api.http().send(req, HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = resp.headers()
                            .firstValue("Content-Encoding")
                            .filter("gzip"::equalsIgnoreCase)
                            .isPresent()
                    ? new GZIPInputStream(resp.body(), 64 * 1024)
                    : resp.body()) {
                if (resp.statusCode() == 304 && ifNoneMatch != null) {
                    return Optional.empty();
                }
                if (resp.statusCode() != 200) {
                    String text = new String(body.readNBytes(300), StandardCharsets.UTF_8);
                    throw new SnapshotUnavailableException(
                            "GET " + req.uri() + ": HTTP " + resp.statusCode() + " " + ApiClient.abbreviate(text));
                }
                RulesSnapshot s = RulesSnapshot.fromJson(body);
                if (!s.cluster().equals(cluster)) {
                    throw new SnapshotUnavailableException("GET " + req.uri() + " answered for cluster " + s.cluster());
                }
                return Optional.of(s);
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new SnapshotUnavailableException("GET " + req.uri() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnapshotUnavailableException("interrupted while fetching " + req.uri(), e);
        }
    }
}
