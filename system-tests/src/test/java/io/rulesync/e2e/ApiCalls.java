package io.rulesync.e2e;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** Requests to a running api with one token, as an operator's script makes them; JSON answers read as plain maps. */
record ApiCalls(String base, String token) {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** The body of {@code GET path}. */
    String get(String path) throws Exception {
        return HTTP.send(request(path).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    HttpResponse<String> post(String path, String json) throws Exception {
        return HTTP.send(request(path).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> put(String path, String json) throws Exception {
        return HTTP.send(request(path).header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + token);
    }

    static Map<?, ?> json(String body) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(body);
    }
}
