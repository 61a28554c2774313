package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.files.ManifestReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestReaderTest {
    @TempDir
    Path dir;

    @Test
    void readsFoldersRecursivelyInPathOrderWithListsAndJson() throws Exception {
        Files.createDirectories(dir.resolve("b"));
        Files.writeString(dir.resolve("b/z.yaml"), "kind: Node\nmetadata: {name: n3}\n");
        Files.writeString(dir.resolve("a.yml"), """
                kind: Node
                metadata: {name: n1}
                ---
                ---
                apiVersion: v1
                kind: List
                items:
                - {kind: Node, metadata: {name: n2a}}
                - {kind: Node, metadata: {name: n2b}}
                """);
        Files.writeString(dir.resolve("c.json"), "{\"kind\": \"Node\", \"metadata\": {\"name\": \"n4\"}}");
        Files.writeString(dir.resolve("notes.txt"), "not a manifest");
        List<ManifestDocument> docs = ManifestReader.read(List.of(dir));
        assertThat(docs)
                .extracting(d -> (Object) ((java.util.Map<?, ?>) d.content().get("metadata")).get("name"))
                .containsExactly((Object) "n1", "n2a", "n2b", "n3", "n4");
        assertThat(docs.get(2).source()).endsWith("a.yml (document 3, items[1])");
    }

    @Test
    void reportsUnparsableFilesWithTheirName() throws Exception {
        Files.writeString(dir.resolve("bad.yaml"), "kind: Service\nmetadata: {name: [unclosed\n");
        Files.writeString(dir.resolve("dup.yaml"), "kind: Service\nkind: Node\n");
        assertThatThrownBy(() -> ManifestReader.read(List.of(dir, dir.resolve("missing.yaml"))))
                .isInstanceOfSatisfying(
                        ManifestException.class,
                        e -> assertThat(e.problems())
                                .extracting(Problem::toString)
                                .satisfiesExactly(
                                        p -> assertThat(p)
                                                .startsWith(dir.resolve("bad.yaml") + ": not valid YAML or JSON"),
                                        p -> assertThat(p)
                                                .startsWith(dir.resolve("dup.yaml") + ": not valid YAML or JSON")
                                                .contains("kind"),
                                        p -> assertThat(p)
                                                .isEqualTo(dir.resolve("missing.yaml") + ": no such file or folder")));
    }

    @Test
    void refusesAliasBombs() {
        // Eight levels of nine references: 9^8 (43 million) nodes if anything walked it expanded.
        StringBuilder bomb = new StringBuilder("l0: &l0 [x,x,x,x,x,x,x,x,x]\n");
        for (int level = 1; level <= 8; level++) {
            bomb.append("l")
                    .append(level)
                    .append(": &l")
                    .append(level)
                    .append(" [")
                    .append(String.join(",", java.util.Collections.nCopies(9, "*l" + (level - 1))))
                    .append("]\n");
        }
        assertThatThrownBy(() -> ManifestReader.parse("bomb.yaml", bomb.toString()))
                .isInstanceOf(ManifestException.class);
    }
}
