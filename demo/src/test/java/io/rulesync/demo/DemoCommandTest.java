package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one-command demo, for real: in-process Kafka, PostgreSQL (a database of its own), the
 * compiler and the watcher on a copy of the example fleet. Both clusters get a first version, and
 * editing a manifest produces the next one.
 */
@EndToEnd
@RequiresPostgres(local = true)
@RequiresKafka
class DemoCommandTest {
    @TempDir
    Path dir;

    @Test
    void startsEverythingAndTurnsAnEditIntoANewVersion() throws Exception {
        DemoRun.copyExamples(dir);
        String db = DemoRun.createDatabase("rulesync_demo_test_");
        try (DemoRun demo = new DemoRun(dir, db)) {
            // The first versions may hold only the clusters' settings; the demo is started once agents run.
            demo.await(0, "shop     v1 ");
            demo.await(0, "edge     v1 ");
            assertThat(demo.started()).isTrue();
            demo.await(0, "shop     node-a   applied version");
            demo.await(0, "shop     node-b   applied version");
            int before = demo.output().length();

            Path web = dir.resolve("shop/web.yaml");
            Files.writeString(
                    web,
                    Files.readString(web)
                            .replace(
                                    "- {addresses: [10.244.1.12], nodeName: node-b}",
                                    "- {addresses: [10.244.1.12], nodeName: node-b}\n- {addresses: [10.244.1.99], nodeName: node-b}"));
            demo.await(before, "EndpointSlice shop/web-7xk2p");
            assertThat(demo.output().substring(before)).containsPattern("shop {5}v[0-9]+ ");
            // Every node's dry-run agent applies it; node-a's rules file then sends the web Service to the new
            // endpoint.
            demo.await(before, "shop     node-a   applied version");
            demo.await(before, "shop     node-b   applied version");
            DemoRun.awaitRules(dir, "node-a", "10.244.1.99:8080");
            assertThat(demo.output().substring(before))
                    .as("the edit touches shop only")
                    .doesNotContain("edge     v");
        } finally {
            DemoRun.drop(db);
        }
    }
}
