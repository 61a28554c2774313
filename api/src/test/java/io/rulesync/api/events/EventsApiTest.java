package io.rulesync.api.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The audit trail of received events, filtered and paged, over real HTTP from real PostgreSQL. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class EventsApiTest {
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop"); // one EndpointSlice event per version
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return api.get(path);
    }

    private static Map<?, ?> json(HttpResponse<String> r) {
        return TestApi.json(r);
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
        assertThat(next)
                .startsWith("/api/v1/clusters/shop/events?kind=EndpointSlice&after=")
                .endsWith("&limit=1");
        List<?> second = (List<?>) json(get(next)).get("events");
        assertThat(second).hasSize(1);
        assertThat(((Map<?, ?>) second.get(0)).get("id"))
                .isNotEqualTo(((Map<?, ?>) ((List<?>) page.get("events")).get(0)).get("id"));
    }

    @Test
    void badFiltersAreProblemsNamingTheParameter() throws Exception {
        assertThat(get("/api/v1/clusters/nope/events").statusCode()).isEqualTo(404);
        for (String[] c : new String[][] {
            {"kind=Pod", "kind"},
            {"since=yesterday", "since"},
            {"namespace=Bad_NS", "namespace"},
            {"limit=0", "limit"},
            {"after=-3", "after"}
        }) {
            HttpResponse<String> r = get("/api/v1/clusters/shop/events?" + c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(json(r).get("parameter")).as(c[0]).isEqualTo(c[1]);
        }
    }
}
