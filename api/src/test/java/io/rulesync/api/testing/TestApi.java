package io.rulesync.api.testing;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.compiler.store.TestDatabase;
import io.rulesync.compiler.store.VersionStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.assertj.core.api.Assertions;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The api as tests run it: on a test database of its own, on a free port, spoken to over real HTTP,
 * with one fresh token per role ({@link #get} uses the viewer's).
 */
public final class TestApi implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    public static final ApiTokens.Issued VIEWER = ApiTokens.issue("vera", Role.VIEWER);
    public static final ApiTokens.Issued OPERATOR = ApiTokens.issue("otto", Role.OPERATOR);
    public static final ApiTokens.Issued AGENT = ApiTokens.issue("node-agent", Role.AGENT);

    /** Spring properties that configure the three tokens. */
    public static String tokenProperty() {
        return String.join(",", VIEWER.line(), OPERATOR.line(), AGENT.line());
    }

    private final TestDatabase db;
    private final VersionStore store;
    private final ConfigurableApplicationContext app;
    private final String base;

    private TestApi(TestDatabase db, VersionStore store, ConfigurableApplicationContext app) {
        this.db = db;
        this.store = store;
        this.app = app;
        this.base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    /**
     * A database of its own holding {@link StoredClusters#twoVersions} of each cluster, and the api
     * on it. Tests that use it declare {@code @RequiresPostgres}.
     */
    public static TestApi onTwoVersions(String... clusters) throws Exception {
        TestDatabase db = TestDatabase.create();
        try {
            VersionStore store = new VersionStore(db.dataSource());
            for (String c : clusters) {
                StoredClusters.twoVersions(store, c);
            }
            return new TestApi(db, store, new SpringApplicationBuilder(ApiApplication.class).web(WebApplicationType.SERVLET)
                    .properties(Map.of("server.port", 0, "spring.datasource.url", db.url(), "spring.datasource.username", db.user(),
                            "spring.datasource.password", db.password(), "spring.main.banner-mode", "off",
                            "rulesync.api.tokens", tokenProperty(), "rulesync.api.action-wait", "PT1S")).run());
        } catch (Exception | Error e) {
            db.close();
            throw e;
        }
    }

    public VersionStore store() {
        return store;
    }

    public ConfigurableApplicationContext context() {
        return app;
    }

    /** GET with the viewer's token. */
    public HttpResponse<String> get(String path) throws Exception {
        return get(path, VIEWER.token());
    }

    /** GET with {@code token} (null: no Authorization header). */
    public HttpResponse<String> get(String path, String token) throws Exception {
        return send(request(path, token).GET());
    }

    /** POST of a JSON body with {@code token} (null: no Authorization header). */
    public HttpResponse<String> post(String path, String json, String token) throws Exception {
        return send(request(path, token).header("Content-Type", "application/json")
                .POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json)));
    }

    private HttpRequest.Builder request(String path, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A JSON body as maps and lists (JSON is YAML 1.2). */
    public static Map<?, ?> json(HttpResponse<String> r) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
    }

    /**
     * The response is an RFC 9457 problem with this status, naming {@code parameter} (null: names
     * none), whose detail contains {@code detail}.
     */
    public static void assertProblem(HttpResponse<String> r, int status, String parameter, String detail) {
        Assertions.assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        Assertions.assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        Map<?, ?> p = json(r);
        Assertions.assertThat(p.get("status")).isEqualTo(status);
        Assertions.assertThat(p.get("parameter")).isEqualTo(parameter);
        Assertions.assertThat((String) p.get("detail")).contains(detail);
    }

    @Override
    public void close() {
        app.close();
        db.close();
    }
}
