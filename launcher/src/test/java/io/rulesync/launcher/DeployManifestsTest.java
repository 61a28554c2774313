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
        for (Object d :
                new Load(LoadSettings.builder().build()).loadAllFromString(Files.readString(DEPLOY.resolve(file)))) {
            if (d != null) {
                out.add((Map<?, ?>) d);
            }
        }
        return out;
    }

    @Test
    void everyContainerRunsARealSubcommandWithSettingsItReads() throws Exception {
        List<String> resources = ((List<?>)
                        documents("kustomization.yaml").get(0).get("resources"))
                .stream().map(String::valueOf).toList();
        try (var files = Files.list(DEPLOY)) {
            assertThat(resources)
                    .containsExactlyInAnyOrderElementsOf(
                            files.map(p -> p.getFileName().toString())
                                    .filter(n -> n.endsWith(".yaml") && !n.equals("kustomization.yaml"))
                                    .toList());
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
                    String image = String.valueOf(container.get("image"));
                    assertThat(image)
                            .as("%s %s", file, container.get("name"))
                            .isEqualTo(container.get("name").equals("agent") ? "rulesync-agent:dev" : "rulesync:dev");
                    List<String> args = ((List<?>) container.get("args"))
                            .stream().map(String::valueOf).toList();
                    List<String> env = container.get("env") == null
                            ? List.of()
                            : ((List<?>) container.get("env"))
                                    .stream()
                                            .map(e -> String.valueOf(((Map<?, ?>) e).get("name")))
                                            .toList();
                    String what = file + " " + container.get("name");
                    checked.add(container.get("name") + ":"
                            + ComposeFileTest.parse(what, image, args, env)
                                    .commandSpec()
                                    .name());
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
                    List<String> args = ((List<?>) container.get("args"))
                            .stream().map(String::valueOf).toList();
                    String url = args.get(args.indexOf("--db-url") + 1);
                    assertThat(url).as(file).contains("sslmode=verify-full").contains("sslrootcert=");
                    String caFile = url.replaceAll(".*[?&]sslrootcert=([^&]+).*", "$1");
                    List<String> mounts = ((List<?>) container.get("volumeMounts"))
                            .stream()
                                    .map(m -> String.valueOf(((Map<?, ?>) m).get("mountPath")))
                                    .toList();
                    assertThat(mounts)
                            .as(file + ": a volume holding " + caFile)
                            .anyMatch(m -> caFile.startsWith(m + "/"));
                    checked.add(file);
                }
            }
        }
        assertThat(checked).containsExactly("compiler.yaml", "api.yaml");
    }

    @Test
    void theWatchersRoleOnlyReads() throws Exception {
        Map<?, ?> role = documents("watcher.yaml").stream()
                .filter(d -> "ClusterRole".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        for (Object rule : (List<?>) role.get("rules")) {
            assertThat(((List<?>) ((Map<?, ?>) rule).get("verbs"))
                            .stream().map(String::valueOf).toList())
                    .containsOnly("list", "watch");
        }
    }

    /**
     * The api serves TLS from mounted files and never plain HTTP; every agent verifies it by a mounted CA and proves its node
     * with its own projected ServiceAccount token (audience rulesync), not a token shared by the cluster's nodes.
     */
    @Test
    void theApiServesTlsAndEachAgentProvesItsNode() throws Exception {
        Map<?, ?> api = container("api.yaml", "Deployment");
        List<String> apiArgs = args(api);
        assertThat(apiArgs).doesNotContain("--insecure-http").contains("--tls-cert", "--tls-key", "--node-issuers");
        for (String option : List.of("--tls-cert", "--tls-key", "--node-issuers")) {
            assertMounted(api, apiArgs.get(apiArgs.indexOf(option) + 1));
        }

        Map<?, ?> agentDoc = documents("node-agent.yaml").stream()
                .filter(d -> "DaemonSet".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        Map<?, ?> pod = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) agentDoc.get("spec")).get("template")).get("spec");
        Map<?, ?> agent = container("node-agent.yaml", "DaemonSet");
        List<String> agentArgs = args(agent);
        assertThat(agentArgs.get(agentArgs.indexOf("--api") + 1)).startsWith("https://");
        assertMounted(agent, agentArgs.get(agentArgs.indexOf("--ca-file") + 1));
        String tokenFile = agentArgs.get(agentArgs.indexOf("--api-token-file") + 1);
        String mount = assertMounted(agent, tokenFile);
        String volume = ((List<?>) agent.get("volumeMounts"))
                .stream()
                        .map(m -> (Map<?, ?>) m)
                        .filter(m -> mount.equals(m.get("mountPath")))
                        .map(m -> String.valueOf(m.get("name")))
                        .findFirst()
                        .orElseThrow();
        Map<?, ?> projected = (Map<?, ?>) ((List<?>) pod.get("volumes"))
                .stream()
                        .map(v -> (Map<?, ?>) v)
                        .filter(v -> volume.equals(v.get("name")))
                        .findFirst()
                        .orElseThrow()
                        .get("projected");
        assertThat(projected)
                .as("the token volume is a projected ServiceAccount token")
                .isNotNull();
        Map<?, ?> token =
                (Map<?, ?>) ((Map<?, ?>) ((List<?>) projected.get("sources")).get(0)).get("serviceAccountToken");
        assertThat(token.get("audience")).isEqualTo("rulesync");
        assertThat(pod.get("serviceAccountName")).isEqualTo("rulesync-agent");
        List<?> env = agent.get("env") == null ? List.of() : (List<?>) agent.get("env");
        assertThat(env.stream().map(e -> String.valueOf(((Map<?, ?>) e).get("name"))))
                .doesNotContain("RULESYNC_API_TOKEN");
    }

    private static Map<?, ?> container(String file, String kind) throws Exception {
        Map<?, ?> doc = documents(file).stream()
                .filter(d -> kind.equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        Map<?, ?> pod = (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) doc.get("spec")).get("template")).get("spec");
        return (Map<?, ?>) ((List<?>) pod.get("containers")).get(0);
    }

    private static List<String> args(Map<?, ?> container) {
        return ((List<?>) container.get("args")).stream().map(String::valueOf).toList();
    }

    /** The mount path that holds {@code file}. */
    private static String assertMounted(Map<?, ?> container, String file) {
        List<String> mounts = ((List<?>) container.get("volumeMounts"))
                .stream()
                        .map(m -> String.valueOf(((Map<?, ?>) m).get("mountPath")))
                        .toList();
        assertThat(mounts).as("a volume holding " + file).anyMatch(m -> file.startsWith(m + "/"));
        return mounts.stream().filter(m -> file.startsWith(m + "/")).findFirst().orElseThrow();
    }
}
