package io.rulesync.api.testing;

import io.rulesync.api.ApiApplication;
import io.rulesync.compiler.store.TestDatabase;
import io.rulesync.compiler.store.VersionStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The api as tests run it: on a test database of its own, on a free port, spoken to over real HTTP. */
public final class TestApi implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

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
     * on it. Skips the test (with the reason) where no PostgreSQL answers.
     */
    public static TestApi onTwoVersions(String... clusters) throws Exception {
        TestDatabase.unavailableReason().ifPresent(r -> Assumptions.assumeTrue(false, r));
        TestDatabase db = TestDatabase.create();
        try {
            VersionStore store = new VersionStore(db.dataSource());
            for (String c : clusters) {
                StoredClusters.twoVersions(store, c);
            }
            return new TestApi(db, store, new SpringApplicationBuilder(ApiApplication.class).web(WebApplicationType.SERVLET)
                    .properties(Map.of("server.port", 0, "spring.datasource.url", db.url(), "spring.datasource.username", db.user(),
                            "spring.datasource.password", db.password(), "spring.main.banner-mode", "off")).run());
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

    public HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A JSON body as maps and lists (JSON is YAML 1.2). */
    public static Map<?, ?> json(HttpResponse<String> r) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
    }

    @Override
    public void close() {
        app.close();
        db.close();
    }
}
