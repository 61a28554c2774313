package io.rulesync.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Paths as the agent and the command line build them, one way for both. */
class ApiClientTest {
    @Test
    void pathsGoUnderTheBaseAndCarryTheToken() {
        ApiClient at = new ApiClient(URI.create("http://api.example:8080"), "rs_t");
        assertThat(at.clusterRequest("shop", "deltas?after=3&node=" + ApiClient.encode("n 1"), Duration.ofSeconds(1))
                        .build()
                        .uri())
                .hasToString("http://api.example:8080/api/v1/clusters/shop/deltas?after=3&node=n%201");
        assertThat(at.request("/api/v1/clusters", Duration.ofSeconds(1))
                        .build()
                        .headers()
                        .firstValue("Authorization"))
                .contains("Bearer rs_t");
        // Behind a proxy that serves the api under a path of its own, with or without the slash.
        for (String base : new String[] {"https://proxy.example/rulesync", "https://proxy.example/rulesync/"}) {
            assertThat(new ApiClient(URI.create(base), null)
                            .request("/api/v1/clusters", Duration.ofSeconds(1))
                            .build()
                            .uri())
                    .hasToString("https://proxy.example/rulesync/api/v1/clusters");
        }
        assertThat(new ApiClient(URI.create("http://h"), null)
                        .request("api/v1/whoami", Duration.ofSeconds(1))
                        .build()
                        .headers()
                        .firstValue("Authorization"))
                .isEmpty();
    }

    @Test
    void namesAreEncodedAlikeInPathsAndQueries() {
        assertThat(ApiClient.encode("a b/c?d&e+f")).isEqualTo("a%20b%2Fc%3Fd%26e%2Bf");
    }
}
