package io.rulesync.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The Kubernetes manifests under deploy/, checked like the compose file: every rulesync container
 * runs a real subcommand with real options and reads every RULESYNC_* variable it is given; the
 * kustomization lists every file; the watcher's RBAC is read-only; every database URL verifies the
 * server's certificate against a CA file the pod mounts.
 */
class DeployManifestsTest {
    private static final Path DEPLOY = Path.of("../deploy");

    private static List<Map<?, ?>> documents(String file) throws Exception {
        List<Map<?, ?>> out = new ArrayList<>();
        for (Object d : new Load(LoadSettings.builder().build()).loadAllFromString(Files.readString(DEPLOY.resolve(file)))) {
            if (d != null) {
                out.add((Map<?, ?>) d);
            }
        }
        return out;
    }

    @Test
    void everyContainerRunsARealSubcommandWithSettingsItReads() throws Exception {
        List<String> resources = ((List<?>) documents("kustomization.yaml").get(0).get("resources")).stream().map(String::valueOf).toList();
        try (var files = Files.list(DEPLOY)) {
            assertThat(resources).containsExactlyInAnyOrderElementsOf(files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") && !n.equals("kustomization.yaml")).toList());
        }
        List<String> checked = new ArrayList<>();
        for (String file : resources) {
            for (Map<?, ?> doc : documents(file)) {
                if (!List.of("Deployment", "DaemonSet").contains(doc.get("kind"))) {
                    continue;
                }
                Map<?, ?> pod = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) doc.get("spec")).get("template")).get("spec");
                for (Object c : (List<?>) pod.get("containers")) {
                    Map<?, ?> container = (Map<?, ?>) c;
                    assertThat(container.get("image")).isEqualTo("rulesync:dev");
                    List<String> args = ((List<?>) container.get("args")).stream().map(String::valueOf).toList();
                    List<String> env = container.get("env") == null ? List.of()
                            : ((List<?>) container.get("env")).stream().map(e -> String.valueOf(((Map<?, ?>) e).get("name"))).toList();
                    String what = file + " " + container.get("name");
                    checked.add(container.get("name") + ":" + ComposeFileTest.parse(what, args, env).commandSpec().name());
                }
            }
        }
        assertThat(checked).containsExactlyInAnyOrder("watcher:watcher", "compiler:compiler", "api:api", "agent:agent");
    }

    /** Every role that connects to PostgreSQL verifies its certificate, against a CA file the pod mounts. */
    @Test
    void everyDatabaseUrlVerifiesTheServerAgainstAMountedCa() throws Exception {
        List<String> checked = new ArrayList<>();
        for (String file : List.of("compiler.yaml", "api.yaml")) {
            for (Map<?, ?> doc : documents(file)) {
                if (!"Deployment".equals(doc.get("kind"))) {
                    continue;
                }
                Map<?, ?> pod = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) doc.get("spec")).get("template")).get("spec");
                for (Object c : (List<?>) pod.get("containers")) {
                    Map<?, ?> container = (Map<?, ?>) c;
                    List<String> args = ((List<?>) container.get("args")).stream().map(String::valueOf).toList();
                    String url = args.get(args.indexOf("--db-url") + 1);
                    assertThat(url).as(file).contains("sslmode=verify-full").contains("sslrootcert=");
                    String caFile = url.replaceAll(".*[?&]sslrootcert=([^&]+).*", "$1");
                    List<String> mounts = ((List<?>) container.get("volumeMounts")).stream()
                            .map(m -> String.valueOf(((Map<?, ?>) m).get("mountPath"))).toList();
                    assertThat(mounts).as(file + ": a volume holding " + caFile).anyMatch(m -> caFile.startsWith(m + "/"));
                    checked.add(file);
                }
            }
        }
        assertThat(checked).containsExactly("compiler.yaml", "api.yaml");
    }

    @Test
    void theWatchersRoleOnlyReads() throws Exception {
        Map<?, ?> role = documents("watcher.yaml").stream().filter(d -> "ClusterRole".equals(d.get("kind"))).findFirst().orElseThrow();
        for (Object rule : (List<?>) role.get("rules")) {
            assertThat(((List<?>) ((Map<?, ?>) rule).get("verbs")).stream().map(String::valueOf).toList()).containsOnly("list", "watch");
        }
    }
}
