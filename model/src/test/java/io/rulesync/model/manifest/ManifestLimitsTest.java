package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounds on what one file and one object may be (issue 13): the manifests of the probe that
 * found a 10 MB single-line file stalling the watcher for a minute, and its 10 MB annotation accepted.
 */
class ManifestLimitsTest {
    private static final String SERVICE_HEAD = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n";
    private static final String SERVICE_SPEC = "spec: {clusterIP: 10.96.0.80, ports: [{port: 80}]}\n";

    @TempDir
    Path dir;

    /** A Service whose one annotation is a single line, the file {@code bytes} long. */
    static String longLine(int bytes) {
        String head = SERVICE_HEAD + "  annotations:\n    big: ";
        return head + "a".repeat(bytes - head.length() - 1 - SERVICE_SPEC.length()) + "\n" + SERVICE_SPEC;
    }

    @Test
    void aFileOverTheLimitIsRefusedBeforeItIsReadNamingItsSizeAndTheLimit() throws Exception {
        // 10 MiB of NUL bytes (sparse): were it read, the problem would be about YAML, not the size.
        Path huge = dir.resolve("huge.yaml");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(10L << 20);
        }
        Files.writeString(dir.resolve("web.yaml"), SERVICE_HEAD + SERVICE_SPEC);
        assertThatThrownBy(() -> ManifestReader.read(List.of(dir)))
                .isInstanceOfSatisfying(ManifestException.class, e -> assertThat(e.problems()).extracting(Problem::toString)
                        .containsExactly(huge + ": is 10,485,760 bytes (10.0 MiB), over the limit of 8,388,608 bytes (8.0 MiB)"
                                + " per file; split it into several files"));
        // The caller may set another limit.
        assertThatThrownBy(() -> ManifestReader.read(List.of(dir.resolve("web.yaml")), 119))
                .isInstanceOfSatisfying(ManifestException.class, e -> assertThat(e.problems()).singleElement()
                        .satisfies(p -> assertThat(p.message()).isEqualTo("is 120 bytes, over the limit of 119 bytes per file; split it into several files")));
        assertThat(ManifestReader.read(List.of(dir.resolve("web.yaml")), 120)).hasSize(1);
    }

    @Test
    void theProbesTenMegabyteSingleLineIsRefusedPromptly() throws Exception {
        Path file = Files.writeString(dir.resolve("long-line.yaml"), longLine(10_000_000));
        List<Problem> problems = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> problemsOf(file, ManifestReader.DEFAULT_MAX_FILE_BYTES));
        assertThat(problems).extracting(Problem::toString).containsExactly(
                file + ": is 10,000,000 bytes (9.5 MiB), over the limit of 8,388,608 bytes (8.0 MiB) per file; split it into several files");
    }

    /**
     * Parsing takes time linear in the size, whatever the length of the lines. Until issue 13 an
     * 8 MB line took about 40 s here (the parser copied its whole window for every 1,024 characters
     * read); now well under a second. The bound is generous so that a busy machine does not fail it;
     * bench/manifest-read has the figures, with a control of the same size in short lines.
     */
    @Test
    void aLongLineIsParsedInTimeLinearInItsSize() throws Exception {
        Path single = Files.writeString(dir.resolve("single.yaml"), longLine(8_000_000));
        long t0 = System.nanoTime();
        List<Problem> problems = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> problemsOf(single, ManifestReader.DEFAULT_MAX_FILE_BYTES));
        System.out.printf("8 MB in one line: read in %.2f s%n", (System.nanoTime() - t0) / 1e9);
        // Parsed whole, then refused for the object's size.
        assertThat(problems).extracting(Problem::toString).containsExactly(single
                + " (document 1): Service shop/web: is 8,000,000 characters long, over the API server's limit of 3,145,728 (3 MiB) per object");
    }

    @Test
    void anObjectOverThreeMebibytesIsRefusedAndAListMayHoldMoreThanThat() throws Exception {
        // A List of 3 Services of about 1.5 MB each (4.5 MB in all) is fine; an item of 3.5 MB is not.
        String items = "apiVersion: v1\nkind: List\nitems:\n"
                + item("a", 1_500_000) + item("b", 1_500_000) + item("c", 1_500_000);
        List<ManifestDocument> docs = ManifestReader.read(List.of(Files.writeString(dir.resolve("list.yaml"), items)));
        assertThat(docs).hasSize(3);

        Path big = Files.writeString(dir.resolve("big.yaml"), "kind: List\nitems:\n" + item("a", 10) + item("b", 3_500_000));
        assertThatThrownBy(() -> ManifestReader.read(List.of(big)))
                .isInstanceOfSatisfying(ManifestException.class, e -> assertThat(e.problems()).extracting(Problem::toString)
                        .singleElement().satisfies(p -> assertThat(p).startsWith(big + " (document 1, items[1]): Service shop/b: is 3,500,")
                                .endsWith("characters long, over the API server's limit of 3,145,728 (3 MiB) per object")));
    }

    private static String item(String name, int annotationBytes) {
        return "- kind: Service\n  metadata:\n    name: " + name + "\n    namespace: shop\n    annotations: {note: "
                + "x".repeat(annotationBytes) + "}\n  spec: {ports: [{port: 80}]}\n";
    }

    @Test
    void aTextOverTheLimitIsRefusedByParseToo() {
        assertThatThrownBy(() -> ManifestReader.parse("in.yaml", longLine(9_000_000)))
                .isInstanceOfSatisfying(ManifestException.class, e -> assertThat(e.problems()).singleElement()
                        .satisfies(p -> assertThat(p.toString()).startsWith("in.yaml: is 9,000,000 bytes")));
    }

    @Test
    void aFileThatIsNotUtf8IsNamed() throws Exception {
        Path file = Files.write(dir.resolve("latin1.yaml"), new byte[] {'k', 'i', 'n', 'd', ':', ' ', (byte) 0xe9, '\n'});
        assertThat(problemsOf(file, ManifestReader.DEFAULT_MAX_FILE_BYTES)).extracting(Problem::toString)
                .containsExactly(file + ": not valid UTF-8");
    }

    private static List<Problem> problemsOf(Path file, long limit) {
        try {
            ManifestReader.read(List.of(file), limit).forEach(d -> {
                throw new AssertionError("expected a problem, read " + d.source());
            });
            return List.of();
        } catch (ManifestException e) {
            return e.problems();
        }
    }
}
