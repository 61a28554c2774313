package io.rulesync.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.cli.OperatorCliTest.Run;
import io.rulesync.model.event.Json;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.cluster.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rulesync plan} as a pull request's check runs it: its own process, against the real api on a real database whose
 * cluster was stored the compiler's way, and the exit status kubectl diff gives (0 nothing, 1 changes, 2 wrong or refused).
 */
@RequiresPostgres
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlanCliTest {
    private TestApi api;

    @TempDir
    Path home;

    @TempDir
    Path manifests;

    @BeforeAll
    void start() throws Exception {
        api = TestApi.onEmpty();
        StoredClusters.logged(
                api.store(),
                "shop",
                null,
                -1,
                List.of(
                        Fixtures.upsert("shop", Fixtures.node("n1", "10.1.0.1")),
                        Fixtures.upsert("shop", Fixtures.node("n2", "10.1.0.2")),
                        Fixtures.upsert("shop", Fixtures.service("web", "10.96.0.10")),
                        Fixtures.upsert("shop", Fixtures.slice("web", "n1", "10.244.1.1"))));
    }

    @AfterAll
    void stop() {
        api.close();
    }

    private Run plan(String... args) throws Exception {
        return OperatorCliTest.run(
                home,
                Map.of("RULESYNC_API", api.baseUrl(), "RULESYNC_TOKEN", TestApi.VIEWER.token()),
                prepend("plan", args));
    }

    private static String[] prepend(String first, String... rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    private Path write(String name, String content) throws Exception {
        Path f = manifests.resolve(name);
        Files.createDirectories(f.getParent());
        return Files.writeString(f, content);
    }

    @Test
    void aChangeIsADiffAndExitsOneAndTheSameStateExitsZero() throws Exception {
        write("pr/web-slice.yaml", Fixtures.slice("web", "n1", "10.244.1.1", "10.244.1.2"));
        // JSON too, and no newline at the end of the file: each file is its own document.
        write(
                "pr/cart.json",
                "{\"kind\": \"Service\", \"metadata\": {\"name\": \"cart\", \"namespace\": \"shop\"}, "
                        + "\"spec\": {\"clusterIP\": \"10.96.0.12\", \"ports\": [{\"name\": \"http\", \"port\": 80}]}}");
        Run changed = plan("shop", "-f", manifests.resolve("pr").toString());
        assertThat(changed.exit()).as(changed.err()).isEqualTo(1);
        assertThat(changed.out())
                .startsWith("--- shop version 1\n+++ shop version 1 with 2 objects applied\n"
                        + " Service shop/cart: created\n EndpointSlice shop/web-1: changed\n@@ n1, n2: changed @@\n")
                .contains("10.244.1.2:8080")
                .contains("shop/cart:http has no endpoints")
                .doesNotContain("\u001b[");

        Run json = plan("shop", "-f", manifests.resolve("pr").toString(), "-o", "json");
        assertThat(json.exit()).isEqualTo(1);
        Map<?, ?> tree = (Map<?, ?>) Json.MAPPER.readValue(json.out(), Object.class);
        assertThat(tree.get("changes")).isEqualTo(true);
        assertThat(tree.get("nodesAffected")).isEqualTo(2);

        Run same = plan(
                "shop",
                "-f",
                write("same.yaml", Fixtures.node("n1", "10.1.0.1")).toString());
        assertThat(same.exit()).as(same.err()).isZero();
        assertThat(same.out()).contains(" Node n1: unchanged\n").contains(" (no node's rules differ)");

        Run gone = plan(
                "shop",
                "--delete",
                "-f",
                write("gone.yaml", Fixtures.service("web", "10.96.0.10")).toString(),
                "--color",
                "always");
        assertThat(gone.exit()).isEqualTo(1);
        assertThat(gone.out()).contains("\u001b[31m--A KUBE-SERVICES");
    }

    @Test
    void wrongInputIsNamedByFileAndExitsTwoBeforeAnythingIsAsked() throws Exception {
        Path bad = write(
                "bad.yaml", "kind: Service\nmetadata: {name: x, namespace: shop}\nspec: {ports: [{port: 99999}]}\n");
        Run r = plan("shop", "-f", bad.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .contains("1 problem(s) with the manifests")
                .contains(bad + " (document 1)")
                .contains("spec.ports[0].port");

        Run missing = plan("shop", "-f", manifests.resolve("nope.yaml").toString());
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("nope.yaml: cannot be read");

        Run unknown = plan(
                "nope", "-f", write("n.yaml", Fixtures.node("n1", "10.1.0.1")).toString());
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("404").contains("nope");
    }

    @Test
    void whatAdmissionWouldRefuseIsShownAndExitsTwo() throws Exception {
        Run r = plan(
                "shop",
                "-f",
                write("clash.yaml", Fixtures.service("aaa", "10.96.0.10")).toString());
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.out()).contains(" refused: Service shop/web: spec.clusterIPs[0]: ");
    }
}
