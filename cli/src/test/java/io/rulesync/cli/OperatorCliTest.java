package io.rulesync.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.event.Json;
import io.rulesync.testing.needs.RequiresPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The operators' command line against the real api on a real database, with real tokens: each command runs as its own
 * process (as an operator runs it, with the environment, the exit status and the two output streams it really has), so
 * the output, the exit codes and the role refusals are the ones a shell sees. Standard output is a pipe here, so tables
 * have no width limit and no colour unless asked.
 */
@RequiresPostgres
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OperatorCliTest {
    private TestApi api;

    @TempDir
    Path home;

    record Run(int exit, String out, String err) {}

    @BeforeAll
    void start() throws Exception {
        api = TestApi.onTwoVersions("shop", "edge");
    }

    @AfterAll
    void stop() {
        api.close();
    }

    private Run as(String token, String... args) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("RULESYNC_API", api.baseUrl());
        if (token != null) {
            env.put("RULESYNC_TOKEN", token);
        }
        return run(env, args);
    }

    private Run run(Map<String, String> env, String... args) throws Exception {
        return run(home, env, args);
    }

    /** The command line as a process of its own, as an operator runs it: with only {@code env} (and HOME, {@code home}) set. */
    static Run run(Path home, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-cp",
                System.getProperty("java.class.path"),
                OperatorCli.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().put("HOME", home.toString());
        pb.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile(home, "out", ".txt");
        Path err = Files.createTempFile(home, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("finished").isTrue();
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static Object tree(String json) {
        return Json.MAPPER.readValue(json, Object.class);
    }

    @Test
    void tablesShowTheClustersHistoryVersionsAndNodes() throws Exception {
        Run clusters = as(TestApi.VIEWER.token(), "clusters");
        assertThat(clusters.exit()).as(clusters.err()).isZero();
        assertThat(clusters.out().lines().toList())
                .first()
                .asString()
                .matches("CLUSTER +VERSION +STATE +NODES +REFUSED");
        assertThat(clusters.out())
                .containsPattern("(?m)^edge +2 +live +0 converged, 0 behind, 0 failed +0$")
                .containsPattern("(?m)^shop +2 +live ");
        assertThat(clusters.err()).isEmpty();

        Run history = as(TestApi.VIEWER.token(), "history", "shop");
        // StoredClusters writes its versions with the cause {"test": true}.
        assertThat(history.out())
                .containsPattern("(?m)^2 +2026-11-29T12:00:02Z +2 fragments, 0 nodes +test: true$")
                .containsPattern("(?m)^1 +2026-11-29T12:00:01Z +4 fragments, 2 nodes +test: true$");

        Run show = as(TestApi.VIEWER.token(), "show", "shop", "latest");
        assertThat(show.out())
                .contains("Version:  2\n")
                .contains("Cause:    test: true\n")
                .contains("Settings:\n");

        Run nodes = as(TestApi.VIEWER.token(), "nodes", "shop");
        assertThat(nodes.out())
                .containsPattern("(?m)^n1 +\\w+ +0 ")
                .containsPattern("(?m)^n2 ")
                .contains("version 2: ");

        Run behind = as(TestApi.VIEWER.token(), "nodes", "shop", "--state", "behind", "-o", "json");
        // Every page in one answer: the api's first page, with all the nodes and no link to a next page.
        Map<?, ?> page = (Map<?, ?>)
                tree(api.get("/api/v1/clusters/shop/nodes?state=behind").body());
        Map<Object, Object> all = new HashMap<>(page);
        all.remove("next");
        assertThat(tree(behind.out())).isEqualTo(all);

        Run events = as(TestApi.VIEWER.token(), "events", "shop", "--since", "3650d", "--limit", "1");
        assertThat(events.exit()).as(events.err()).isZero();
        assertThat(events.out().lines().toList())
                .hasSize(2)
                .first()
                .asString()
                .matches("ID +RECEIVED +TYPE +KIND +VERSION +OBJECT");

        Run rules = as(TestApi.VIEWER.token(), "rules", "shop", "--node", "n1", "--version", "1");
        assertThat(rules.out()).startsWith("*").contains("-A KUBE-SERVICES").contains("COMMIT");
        assertThat(rules.out())
                .isEqualTo(api.get("/api/v1/clusters/shop/versions/1/rules?node=n1")
                        .body());
        Run table = as(TestApi.VIEWER.token(), "rules", "shop", "--node", "n1", "--version", "1", "--mode", "nftables");
        assertThat(table.out())
                .startsWith("add table ip kube-proxy ")
                .isEqualTo(api.get("/api/v1/clusters/shop/versions/1/rules?node=n1&mode=nftables")
                        .body());
    }

    @Test
    void aDiffIsAUnifiedDiffColouredOnlyWhenAsked() throws Exception {
        Run plain = as(TestApi.VIEWER.token(), "diff", "shop", "2");
        assertThat(plain.exit()).as(plain.err()).isZero();
        assertThat(plain.out())
                .startsWith("--- shop version 1\n+++ shop version 2\n@@ n1: changed @@\n *nat (ipv4)\n")
                .contains("\n+:KUBE-SEP-")
                .contains("\n-:KUBE-SEP-")
                .containsPattern("\n--A KUBE-SVL-\\S+ .*10\\.244\\.1\\.2")
                .containsPattern("\n\\+-A KUBE-SVL-\\S+ .*10\\.244\\.1\\.3")
                .doesNotContain("\u001b[")
                .contains(" unchanged: n2");
        // One rendering: the api's, which the dashboard shows too.
        assertThat(plain.out())
                .isEqualTo(TestApi.json(api.get("/api/v1/clusters/shop/versions/2/diff"))
                        .get("text"));
        assertThat(as(TestApi.VIEWER.token(), "diff", "shop", "1", "2").out()).isEqualTo(plain.out());
        assertThat(as(TestApi.VIEWER.token(), "diff", "shop", "2", "--node", "n2")
                        .out())
                .contains("(no node's rules differ)");
        Run coloured = as(TestApi.VIEWER.token(), "diff", "shop", "2", "--color", "always");
        assertThat(coloured.out())
                .contains("\u001b[32m+:KUBE-SEP-")
                .contains("\u001b[31m-:KUBE-SEP-")
                .contains("\u001b[36m@@ n1: changed @@");
        // nftables mode's diff of one node: the api's text too.
        Run nft = as(TestApi.VIEWER.token(), "diff", "shop", "2", "--node", "n1", "--mode", "nftables");
        assertThat(nft.out())
                .startsWith("--- shop version 1\n+++ shop version 2\n@@ n1 (nftables mode): changed @@\n ipv4\n")
                .isEqualTo(TestApi.json(api.get("/api/v1/clusters/shop/versions/2/diff?node=n1&mode=nftables"))
                        .get("text"));
    }

    @Test
    void scriptsGetTheApisAnswerAsJsonOrYaml() throws Exception {
        Object expected = tree(api.get("/api/v1/clusters").body());
        Run json = as(TestApi.VIEWER.token(), "clusters", "-o", "json");
        assertThat(tree(json.out())).isEqualTo(expected);
        Run yaml = as(TestApi.VIEWER.token(), "clusters", "-o", "YAML");
        assertThat(new Load(LoadSettings.builder().build()).loadFromString(yaml.out()))
                .isEqualTo(expected);
        assertThat(tree(as(TestApi.VIEWER.token(), "diff", "shop", "2", "-o", "json")
                        .out()))
                .isEqualTo(tree(api.get("/api/v1/clusters/shop/versions/2/diff").body()));
    }

    @Test
    void exitCodesSayWhatHappenedAndTheApisProblemIsOneLine() throws Exception {
        Run forbidden = as(TestApi.VIEWER.token(), "rollback", "shop", "--to", "1", "--reason", "bad deploy");
        assertThat(forbidden.exit()).isEqualTo(1);
        assertThat(forbidden.out()).isEmpty();
        assertThat(forbidden.err())
                .startsWith("rulesync: 403 Forbidden: ")
                .contains("operator")
                .hasLineCount(1);

        Run unknown = as(TestApi.VIEWER.token(), "history", "nope");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).startsWith("rulesync: 404 ").contains("nope").hasLineCount(1);

        Run badValue = as(TestApi.VIEWER.token(), "history", "shop", "--limit", "100000");
        assertThat(badValue.exit())
                .as("the api's 400: the command was given wrongly")
                .isEqualTo(2);
        assertThat(badValue.err())
                .startsWith("rulesync: 400 ")
                .contains("limit")
                .hasLineCount(1);

        Run missing = as(TestApi.VIEWER.token(), "history");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("Missing required parameter: 'CLUSTER'");
        assertThat(as(TestApi.VIEWER.token(), "history", "shop", "--limit", "ten")
                        .exit())
                .isEqualTo(2);
        assertThat(as(TestApi.VIEWER.token(), "diff", "shop", "2", "--mode", "ipvs")
                        .err())
                .isEqualTo("rulesync: --mode ipvs compares one node's rules: give --node\n");
        assertThat(as(TestApi.VIEWER.token(), "diff", "shop", "2", "--mode", "nftables")
                        .err())
                .isEqualTo("rulesync: --mode nftables compares one node's rules: give --node\n");

        Map<String, String> nowhere =
                Map.of("RULESYNC_API", "http://127.0.0.1:1", "RULESYNC_TOKEN", TestApi.VIEWER.token());
        Run unreachable = run(nowhere, "clusters");
        assertThat(unreachable.exit()).isEqualTo(3);
        assertThat(unreachable.err())
                .startsWith("rulesync: cannot reach the api at http://127.0.0.1:1: ")
                .hasLineCount(1);

        Run noToken = as(null, "clusters");
        assertThat(noToken.exit()).isEqualTo(1);
        assertThat(noToken.err())
                .startsWith("rulesync: 401 ")
                .contains("no token: set RULESYNC_TOKEN, or 'token:' in " + home.resolve(".config/rulesync/config")
                        + " (mode 0600)");
        assertThat(as("rs_not-a-token", "clusters").err()).contains("(the token is not accepted)");
    }

    @Test
    void anOperatorRollsBackAndResumesAndAConflictIsRefused() throws Exception {
        // No compiler runs here: the api records the action and answers 202 once its wait is up.
        Run rollback = as(TestApi.OPERATOR.token(), "rollback", "edge", "--to", "1", "--reason", "bad deploy");
        assertThat(rollback.exit()).as(rollback.err()).isZero();
        assertThat(rollback.out())
                .matches("edge: rollback requested \\(audit entry \\d+\\); the compiler has not carried it out yet: "
                        + "follow it with 'rulesync audit edge'\n");
        Run again = as(TestApi.OPERATOR.token(), "resume", "edge", "--reason", "fixed");
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).startsWith("rulesync: 409 Conflict: ").hasLineCount(1);

        Run audit = as(TestApi.VIEWER.token(), "audit", "edge");
        assertThat(audit.out()).containsPattern("(?m)^\\d+ +\\S+ +edge +rollback to v1 +otto +pending +- +bad deploy$");
        assertThat(as(TestApi.VIEWER.token(), "audit", "shop").out()).startsWith("no operator actions on shop\n");
    }

    @Test
    void rolloutVerbsSetAPolicyAndShowWhereItStands() throws Exception {
        assertThat(as(TestApi.VIEWER.token(), "rollout", "status", "shop").out())
                .isEqualTo("shop: no rollout policy; every node gets each version at once\n");
        Path policy = home.resolve("policy.yaml");
        Files.writeString(
                policy, "waves:\n  - {name: canary, nodes: [n1], bake: 1m}\n  - {name: rest, percent: 100}\n");
        Run viewer = as(
                TestApi.VIEWER.token(), "rollout", "policy", "shop", "-f", policy.toString(), "--reason", "canaries");
        assertThat(viewer.exit()).isEqualTo(1);
        Run set = as(
                TestApi.OPERATOR.token(), "rollout", "policy", "shop", "-f", policy.toString(), "--reason", "canaries");
        assertThat(set.exit()).as(set.err()).isZero();
        assertThat(set.out()).startsWith("shop: rollout policy set");
        Run promote = as(TestApi.OPERATOR.token(), "rollout", "promote", "shop", "--reason", "now");
        assertThat(promote.exit()).isEqualTo(1);
        assertThat(promote.err()).startsWith("rulesync: 409 ").hasLineCount(1);
        Files.writeString(policy, "waves: [{percent: 0}]\n");
        Run bad =
                as(TestApi.OPERATOR.token(), "rollout", "policy", "shop", "-f", policy.toString(), "--reason", "typo");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("waves[0].percent").hasLineCount(1);
        assertThat(as(TestApi.OPERATOR.token(), "rollout", "policy", "shop", "--remove", "--reason", "done")
                        .out())
                .startsWith("shop: rollout policy removed");
    }

    @Test
    void theTokenMayComeFromAConfigFileOnlyItsOwnerCanRead() throws Exception {
        Path config = home.resolve(".config/rulesync/config");
        Files.createDirectories(config.getParent());
        Files.writeString(
                config, "api: " + api.baseUrl() + "\ntoken: " + TestApi.VIEWER.token() + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
        Run open = run(Map.of(), "clusters");
        assertThat(open.exit()).isEqualTo(2);
        assertThat(open.err())
                .isEqualTo("rulesync: configuration file " + config + " may hold a token and other users can read it "
                        + "(rw-r--r--); run: chmod 600 " + config + "\n");
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
        Run ok = run(Map.of(), "clusters");
        assertThat(ok.exit()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("shop");
        // The environment comes first: an operator's token for one command, the config's viewer token otherwise.
        assertThat(run(Map.of("RULESYNC_TOKEN", "rs_wrong"), "clusters").exit()).isEqualTo(1);
        deleteQuietly(config);
    }

    @Test
    void aNarrowTerminalCutsTheFreeTextNotTheRows() throws Exception {
        Run narrow = run(
                Map.of("RULESYNC_API", api.baseUrl(), "RULESYNC_TOKEN", TestApi.VIEWER.token(), "COLUMNS", "60"),
                "history",
                "shop");
        assertThat(narrow.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(60));
        assertThat(narrow.out()).containsPattern("(?m)^2 +\\S+ +\\d+ fragments, 0 nodes +test\\.\\.\\.$");
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // the temporary directory goes anyway
        }
    }
}
