package io.rulesync.cli.generated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.rulesync.api.testing.TestApi;
import io.rulesync.generated.ApiClient;
import io.rulesync.generated.ApiException;
import io.rulesync.generated.api.ActionsControllerApi;
import io.rulesync.generated.api.ClustersControllerApi;
import io.rulesync.generated.api.HistoryControllerApi;
import io.rulesync.generated.model.ClusterJson;
import io.rulesync.generated.model.Problem;
import io.rulesync.generated.model.RollbackRequest;
import io.rulesync.generated.model.VersionDetail;
import io.rulesync.testing.needs.RequiresPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A client generated from the api's OpenAPI document (api/openapi.json, by openapi-generator's Java generator, as a user
 * would make one) works against the real api: its answers read into the generated types, and its errors too, each a
 * problem the client can read, not only the 200s.
 */
@RequiresPostgres
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GeneratedClientTest {
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
    }

    @AfterAll
    void tearDown() {
        api.close();
    }

    private ApiClient client(String token) {
        ApiClient c = new ApiClient();
        c.updateBaseUri(api.baseUrl());
        if (token != null) {
            c.setRequestInterceptor(b -> b.header("Authorization", "Bearer " + token));
        }
        return c;
    }

    private static Problem problem(ApiClient client, ApiException e) throws Exception {
        return client.getObjectMapper().readValue(e.getResponseBody(), Problem.class);
    }

    @Test
    void answersReadIntoTheGeneratedTypes() throws Exception {
        ApiClient viewer = client(TestApi.VIEWER.token());
        ClusterJson shop = new ClustersControllerApi(viewer).cluster("shop");
        assertThat(shop.getVersion()).isEqualTo(2L);
        assertThat(new ClustersControllerApi(viewer).clusters().getClusters())
                .extracting(ClusterJson::getCluster)
                .containsExactly("shop");
        VersionDetail v2 = new HistoryControllerApi(viewer).version("shop", "latest");
        assertThat(v2.getCauseSummary()).isEqualTo("test: true");
        assertThat(new HistoryControllerApi(viewer).rules("shop", "1", "n1", null, null))
                .contains("-A KUBE-SERVICES");
    }

    @Test
    void errorsAreProblemsTheClientReads() throws Exception {
        ApiClient viewer = client(TestApi.VIEWER.token());
        ApiException unknown =
                catchThrowableOfType(ApiException.class, () -> new ClustersControllerApi(viewer).cluster("nope"));
        assertThat(unknown.getCode()).isEqualTo(404);
        Problem p = problem(viewer, unknown);
        assertThat(p.getStatus()).isEqualTo(404);
        assertThat(p.getParameter()).isEqualTo("cluster");
        assertThat(p.getDetail()).isEqualTo("cluster: 'nope' is not known (it has no versions)");

        ApiClient nobody = client(null);
        ApiException unauthenticated =
                catchThrowableOfType(ApiException.class, () -> new ClustersControllerApi(nobody).clusters());
        assertThat(unauthenticated.getCode()).isEqualTo(401);
        assertThat(problem(nobody, unauthenticated).getStatus()).isEqualTo(401);

        // A viewer may not roll back: 403, with the reason.
        ApiException forbidden = catchThrowableOfType(
                ApiException.class,
                () -> new ActionsControllerApi(viewer)
                        .rollback("shop", new RollbackRequest().toVersion(1L).reason("bad deploy")));
        assertThat(forbidden.getCode()).isEqualTo(403);
        assertThat(problem(viewer, forbidden).getDetail()).contains("operator");

        ApiException badVersion =
                catchThrowableOfType(ApiException.class, () -> new HistoryControllerApi(viewer).version("shop", "two"));
        assertThat(badVersion.getCode()).isEqualTo(400);
        assertThat(problem(viewer, badVersion).getParameter()).isEqualTo("version");
    }
}
