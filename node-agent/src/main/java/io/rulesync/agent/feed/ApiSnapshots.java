package io.rulesync.agent.feed;

import io.rulesync.model.rules.RulesSnapshot;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Snapshots from the api role: {@code GET /api/v1/clusters/{c}/versions/{v}/snapshot?node=N}. */
public final class ApiSnapshots implements SnapshotSource {
    private final ApiConnection api;

    public ApiSnapshots(ApiConnection api) {
        this.api = api;
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
        HttpRequest req = api.request(cluster, "versions/" + version + "/snapshot?node=" + ApiConnection.encode(node), Duration.ofSeconds(60))
                .header("Accept", "application/json").GET().build();
        try {
            HttpResponse<String> resp = api.http().send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (resp.statusCode() != 200) {
                throw new SnapshotUnavailableException("GET " + req.uri() + ": HTTP " + resp.statusCode() + " "
                        + ApiConnection.abbreviate(resp.body()));
            }
            RulesSnapshot s = RulesSnapshot.fromJson(resp.body());
            if (!s.cluster().equals(cluster)) {
                throw new SnapshotUnavailableException("GET " + req.uri() + " answered for cluster " + s.cluster());
            }
            return s;
        } catch (IOException | IllegalArgumentException e) {
            throw new SnapshotUnavailableException("GET " + req.uri() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SnapshotUnavailableException("interrupted while fetching " + req.uri(), e);
        }
    }
}
