package io.rulesync.api.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.compiler.store.TestDatabase;
import io.rulesync.compiler.store.VersionStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The audit trail of received events, filtered and paged, over real HTTP from real PostgreSQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventsApiTest {
    private TestDatabase db;
    private ConfigurableApplicationContext app;
    private String base;

    @BeforeAll
    void setUp() throws Exception {
        TestDatabase.unavailableReason().ifPresent(r -> Assumptions.assumeTrue(false, r));
        db = TestDatabase.create();
        StoredClusters.twoVersions(new VersionStore(db.dataSource()), "shop"); // one EndpointSlice event per version
        app = new SpringApplicationBuilder(ApiApplication.class).web(WebApplicationType.SERVLET).properties(Map.of(
                "server.port", 0, "spring.datasource.url", db.url(), "spring.datasource.username", db.user(),
                "spring.datasource.password", db.password(), "spring.main.banner-mode", "off")).run();
        base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    void tearDown() {
        if (app != null) {
            app.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Map<?, ?> json(HttpResponse<String> r) {
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
    }

    private List<?> events(String query) throws Exception {
        return (List<?>) json(get("/api/v1/clusters/shop/events" + query)).get("events");
    }

    @Test
    void eventsAsReceivedWithTheVersionTheyWentInto() throws Exception {
        List<?> all = events("");
        assertThat(all).hasSize(2);
        Map<?, ?> first = (Map<?, ?>) all.get(0);
        assertThat(first.get("type")).isEqualTo("upsert");
        assertThat(first.get("kind")).isEqualTo("EndpointSlice");
        assertThat(first.get("object")).isEqualTo("shop/web-1");
        assertThat(events("?kind=EndpointSlice&namespace=shop&name=web-1")).hasSize(2);
        assertThat(events("?namespace=shop")).hasSize(2);
        assertThat(events("?name=web-1")).hasSize(2);
        assertThat(events("?kind=Service")).isEmpty();
        assertThat(events("?namespace=other")).isEmpty();
        assertThat(events("?since=2999-01-01T00:00:00Z")).isEmpty();

        Map<?, ?> page = json(get("/api/v1/clusters/shop/events?kind=EndpointSlice&limit=1"));
        assertThat((List<?>) page.get("events")).hasSize(1);
        String next = (String) page.get("next");
        assertThat(next).startsWith("/api/v1/clusters/shop/events?kind=EndpointSlice&after=").endsWith("&limit=1");
        List<?> second = (List<?>) json(get(next)).get("events");
        assertThat(second).hasSize(1);
        assertThat(((Map<?, ?>) second.get(0)).get("id")).isNotEqualTo(((Map<?, ?>) ((List<?>) page.get("events")).get(0)).get("id"));
    }

    @Test
    void badFiltersAreProblemsNamingTheParameter() throws Exception {
        assertThat(get("/api/v1/clusters/nope/events").statusCode()).isEqualTo(404);
        for (String[] c : new String[][] {{"kind=Pod", "kind"}, {"since=yesterday", "since"}, {"namespace=Bad_NS", "namespace"},
                {"limit=0", "limit"}, {"after=-3", "after"}}) {
            HttpResponse<String> r = get("/api/v1/clusters/shop/events?" + c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(json(r).get("parameter")).as(c[0]).isEqualTo(c[1]);
        }
    }
}
