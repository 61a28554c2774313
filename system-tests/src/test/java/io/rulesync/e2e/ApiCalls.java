package io.rulesync.e2e;

import io.rulesync.api.cli.ApiCommand;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.testsupport.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/** Requests to a running api with one token, as an operator's script makes them; JSON answers read as plain maps. */
record ApiCalls(String base, String token) {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** The body of {@code GET path}. */
    String get(String path) throws Exception {
        return HTTP.send(request(path).build(), HttpResponse.BodyHandlers.ofString())
                .body();
    }

    HttpResponse<String> post(String path, String json) throws Exception {
        return HTTP.send(
                request(path)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> put(String path, String json) throws Exception {
        return HTTP.send(
                request(path)
                        .header("Content-Type", "application/json")
                        .PUT(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + token);
    }

    /**
     * The api role on {@code db}, started as {@code rulesync api} would be, with these tokens and the compiler's events topic
     * (where rollbacks go); the caller closes it.
     */
    static ConfigurableApplicationContext startApi(TestDatabase db, String eventsTopic, List<String> tokenLines) {
        ApiCommand command = new ApiCommand().withTokens(tokenLines);
        new CommandLine(command)
                .parseArgs(
                        "--port=0",
                        "--stream-port=0",
                        "--address=127.0.0.1",
                        "--db-url=" + db.url(),
                        "--db-user=" + db.user(),
                        "--events-topic=" + eventsTopic);
        command.withDatabasePassword(db.password());
        return command.start();
    }

    /** The base address of an api {@link #startApi} started. */
    static String baseUrl(ConfigurableApplicationContext api) {
        return "http://127.0.0.1:" + api.getEnvironment().getProperty("local.server.port");
    }

    /** Where an api {@link #startApi} started serves node streams. */
    static String streamTarget(ConfigurableApplicationContext api) {
        return "127.0.0.1:" + api.getBean(NodeStreamServer.class).port();
    }

    static Map<?, ?> json(String body) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(body);
    }
}
