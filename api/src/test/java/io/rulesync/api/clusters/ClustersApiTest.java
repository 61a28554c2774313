package io.rulesync.api.clusters;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fleet at a glance, over real HTTP, from real PostgreSQL. */
@RequiresPostgres
class ClustersApiTest {
    @Test
    void everyClusterWithItsVersionAndNodeCounts() throws Exception {
        try (TestApi api = TestApi.onTwoVersions("shop", "edge")) {
            Instant at = Instant.now();
            api.context()
                    .getBean(NodeStatusStore.class)
                    .recordAcks(List.of(
                            new NodeAck("shop", "n1", 2, 2, NodeAck.Status.APPLIED, null, 12, 40, "iptables", at),
                            new NodeAck("shop", "n2", 2, 1, NodeAck.Status.FAILED, "refused", 7, 0, "iptables", at),
                            new NodeAck("edge", "n1", 1, 1, NodeAck.Status.APPLIED, null, 12, 40, "iptables", at)));
            HttpResponse<String> r = api.get("/api/v1/clusters");
            assertThat(r.statusCode()).isEqualTo(200);
            List<?> clusters = (List<?>) TestApi.json(r).get("clusters");
            Map<?, ?> edge = (Map<?, ?>) clusters.get(0);
            Map<?, ?> shop = (Map<?, ?>) clusters.get(1);
            assertThat(edge.get("cluster")).isEqualTo("edge");
            assertThat(edge.get("version")).isEqualTo(2);
            assertThat(edge.get("nodes")).isEqualTo(Map.of("converged", 0, "behind", 1, "failed", 0));
            assertThat(shop.get("cluster")).isEqualTo("shop");
            assertThat(shop.get("nodes")).isEqualTo(Map.of("converged", 1, "behind", 0, "failed", 1));
            assertThat(shop.get("createdAt"))
                    .isEqualTo(api.store()
                            .history()
                            .version("shop", 2)
                            .orElseThrow()
                            .createdAt()
                            .toString());

            // One cluster's line alone, for a page about it; an unknown cluster is a problem naming it.
            assertThat(TestApi.json(api.get("/api/v1/clusters/shop"))).isEqualTo(shop);
            assertThat(TestApi.json(api.get("/api/v1/clusters/edge"))).isEqualTo(edge);
            TestApi.assertProblem(
                    api.get("/api/v1/clusters/bank"),
                    404,
                    "cluster",
                    "cluster: 'bank' is not known (it has no versions)");
        }
    }
}
