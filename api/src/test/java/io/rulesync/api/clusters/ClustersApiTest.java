package io.rulesync.api.clusters;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.ApiApplication;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.compiler.store.NodeStatusStore;
import io.rulesync.compiler.store.TestDatabase;
import io.rulesync.compiler.store.VersionStore;
import io.rulesync.model.ack.NodeAck;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The fleet at a glance, over real HTTP, from real PostgreSQL. */
class ClustersApiTest {
    @Test
    void everyClusterWithItsVersionAndNodeCounts() throws Exception {
        TestDatabase.unavailableReason().ifPresent(r -> Assumptions.assumeTrue(false, r));
        try (TestDatabase db = TestDatabase.create()) {
            VersionStore store = new VersionStore(db.dataSource());
            StoredClusters.twoVersions(store, "shop");
            StoredClusters.twoVersions(store, "edge");
            try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ApiApplication.class).web(WebApplicationType.SERVLET)
                    .properties(Map.of("server.port", 0, "spring.datasource.url", db.url(), "spring.datasource.username", db.user(),
                            "spring.datasource.password", db.password(), "spring.main.banner-mode", "off")).run()) {
                Instant at = Instant.now();
                app.getBean(NodeStatusStore.class).recordAcks(List.of(
                        new NodeAck("shop", "n1", 2, 2, NodeAck.Status.APPLIED, null, 12, 40, "iptables", at),
                        new NodeAck("shop", "n2", 2, 1, NodeAck.Status.FAILED, "refused", 7, 0, "iptables", at),
                        new NodeAck("edge", "n1", 1, 1, NodeAck.Status.APPLIED, null, 12, 40, "iptables", at)));
                String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
                HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + "/api/v1/clusters")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                List<?> clusters = (List<?>) ((Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body())).get("clusters");
                Map<?, ?> edge = (Map<?, ?>) clusters.get(0);
                Map<?, ?> shop = (Map<?, ?>) clusters.get(1);
                assertThat(edge.get("cluster")).isEqualTo("edge");
                assertThat(edge.get("version")).isEqualTo(2);
                assertThat(edge.get("nodes")).isEqualTo(Map.of("converged", 0, "behind", 1, "failed", 0));
                assertThat(shop.get("cluster")).isEqualTo("shop");
                assertThat(shop.get("nodes")).isEqualTo(Map.of("converged", 1, "behind", 0, "failed", 1));
                assertThat(shop.get("createdAt")).isEqualTo(store.version("shop", 2).orElseThrow().createdAt().toString());
            }
        }
    }
}
