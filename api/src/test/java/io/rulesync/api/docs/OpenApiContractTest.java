package io.rulesync.api.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.TestApi;
import io.rulesync.model.event.Json;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;

/**
 * The OpenAPI document declares each answer an operation gives, with the problem detail's schema: a client generated from
 * it knows every error, not only the 200. And every reference in it resolves.
 */
@RequiresPostgres
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenApiContractTest {
    private static final List<String> EVERYWHERE = List.of("400", "401", "403", "429", "503");
    private TestApi api;
    private JsonNode doc;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
        doc = Json.MAPPER.readTree(api.get("/v3/api-docs").body());
    }

    @AfterAll
    void tearDown() {
        api.close();
    }

    private JsonNode operation(String path, String method) {
        return doc.path("paths").path(path).path(method);
    }

    @Test
    void everyOperationDeclaresItsProblems() {
        List<String> missing = new ArrayList<>();
        int operations = 0;
        for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
            for (Map.Entry<String, JsonNode> op : path.getValue().properties()) {
                operations++;
                List<String> wanted = new ArrayList<>(EVERYWHERE);
                if (path.getKey().contains("{")) {
                    wanted.add("404");
                }
                for (String status : wanted) {
                    JsonNode schema = op.getValue()
                            .path("responses")
                            .path(status)
                            .path("content")
                            .path("application/problem+json")
                            .path("schema")
                            .path("$ref");
                    if (!schema.asString("").equals("#/components/schemas/Problem")) {
                        missing.add(op.getKey().toUpperCase() + " " + path.getKey() + " " + status);
                    }
                }
            }
        }
        assertThat(operations).isGreaterThanOrEqualTo(19);
        assertThat(missing).as("operations without a declared problem").isEmpty();
        assertThat(doc.path("components")
                        .path("schemas")
                        .path("Problem")
                        .path("properties")
                        .propertyNames())
                .contains("status", "detail", "parameter");
    }

    @Test
    void theAnswersDecidedAtRunTimeAreDeclared() {
        JsonNode acks = operation("/api/v1/clusters/{cluster}/nodes/{node}/acks", "post")
                .path("responses");
        assertThat(acks.has("204")).isTrue();
        assertThat(acks.has("200")).as("acks never answer 200").isFalse();
        for (String action : List.of("rollback", "resume")) {
            JsonNode r =
                    operation("/api/v1/clusters/{cluster}/" + action, "post").path("responses");
            assertThat(r.propertyNames()).as(action).contains("200", "202", "409");
        }
        JsonNode replay = operation("/api/v1/clusters/{cluster}/dead-letters/{id}/replay", "post")
                .path("responses");
        assertThat(replay.propertyNames()).contains("202").doesNotContain("200");
    }

    @Test
    void everyReferenceResolves() {
        List<String> refs = new ArrayList<>();
        collect(doc, refs);
        TreeSet<String> unresolved = new TreeSet<>();
        for (String ref : refs) {
            JsonNode at = doc;
            for (String part : ref.substring(2).split("/")) {
                at = at.path(part);
            }
            if (at.isMissingNode()) {
                unresolved.add(ref);
            }
        }
        assertThat(refs).isNotEmpty();
        assertThat(unresolved).isEmpty();
    }

    private static void collect(JsonNode n, List<String> refs) {
        if (n.isObject()) {
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                if (e.getKey().equals("$ref") && e.getValue().isString()) {
                    refs.add(e.getValue().asString());
                } else {
                    collect(e.getValue(), refs);
                }
            }
        } else if (n.isArray()) {
            n.forEach(c -> collect(c, refs));
        }
    }
    /**
     * Redocly's linter, with its recommended rules, finds nothing to say: what a generated client and an API portal read
     * (a 4xx for every operation, unique operation ids, servers, a title) is there. But a licence: none is chosen yet.
     */
    @Test
    @RequiresTool("redocly")
    void redoclysRecommendedRulesFindNothing() throws Exception {
        Path dir = Files.createTempDirectory("openapi-lint");
        try {
            Path file = Files.writeString(
                    dir.resolve("openapi.json"), api.get("/v3/api-docs").body());
            // No licence is declared: the project has not chosen one, and the document should not claim one.
            Files.writeString(dir.resolve("redocly.yaml"), "extends:\n  - recommended\nrules:\n  info-license: off\n");
            Process p = new ProcessBuilder("redocly", "lint", "--format=stylish", file.toString())
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(said).as(said).contains("Woohoo! Your API description is valid.");
            assertThat(said).as(said).doesNotContainPattern("(?i)\\d+ warnings?");
            assertThat(p.exitValue()).as(said).isZero();
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }
    /**
     * The document is also kept in the repository ({@code api/openapi.json}), for readers without a running api and for
     * the client the command line's tests generate from it: it must be what the api serves. After a change to the api,
     * {@code mvn -pl api test -Dtest=OpenApiContractTest -Drulesync.openapi.write} writes it again.
     */
    @Test
    void theKeptDocumentIsTheServedOne() throws Exception {
        Path kept = Path.of("openapi.json");
        String served = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(doc) + "\n";
        if (System.getProperty("rulesync.openapi.write") != null) {
            Files.writeString(kept, served);
        }
        assertThat(Files.exists(kept)).as("api/openapi.json exists").isTrue();
        assertThat(Json.MAPPER.readTree(Files.readString(kept)))
                .as("api/openapi.json is the served document; write it again with "
                        + "mvn -pl api test -Dtest=OpenApiContractTest -Drulesync.openapi.write")
                .isEqualTo(doc);
    }
}
