package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bounds on what one file and one object may be: the manifests of the probe that
 * found a 10 MB single-line file stalling the watcher for a minute, and its 10 MB annotation accepted.
 */
class ManifestLimitsTest {
    private static final String SERVICE_HEAD =
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n";
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
        // Just over 1 GiB of NUL bytes (sparse): were it read, the problem would be about YAML, not the size.
        Path huge = dir.resolve("huge.yaml");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength((1L << 30) + 1);
        }
        Files.writeString(dir.resolve("web.yaml"), SERVICE_HEAD + SERVICE_SPEC);
        assertThatThrownBy(() -> ManifestReader.read(List.of(dir)))
                .isInstanceOfSatisfying(
                        ManifestException.class,
                        e -> assertThat(e.problems())
                                .extracting(Problem::toString)
                                .containsExactly(huge
                                        + ": is 1,073,741,825 bytes (1024.0 MiB), over the limit of 1,073,741,824 bytes"
                                        + " (1024.0 MiB) per file; split it into several files"));
        // The caller may set another limit.
        assertThatThrownBy(() -> ManifestReader.read(List.of(dir.resolve("web.yaml")), 119))
                .isInstanceOfSatisfying(
                        ManifestException.class,
                        e -> assertThat(e.problems())
                                .singleElement()
                                .satisfies(
                                        p -> assertThat(p.message())
                                                .isEqualTo(
                                                        "is 120 bytes, over the limit of 119 bytes per file; split it into several files")));
        assertThat(ManifestReader.read(List.of(dir.resolve("web.yaml")), 120)).hasSize(1);
    }

    @Test
    void theProbesTenMegabyteSingleLineIsRefusedPromptlyForItsObjectsSize() throws Exception {
        Path file = Files.writeString(dir.resolve("long-line.yaml"), longLine(10_000_000));
        List<Problem> problems = assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> problemsOf(file, ManifestReader.DEFAULT_MAX_FILE_BYTES));
        assertThat(problems)
                .singleElement()
                .satisfies(
                        p -> assertThat(p.toString())
                                .startsWith(file + " (document 1): is at least ")
                                .endsWith(
                                        "characters long, over the API server's limit of 3,145,728 (3 MiB) per object; read no further"));
    }

    /**
     * Parsing takes time linear in the size, whatever the length of the lines. Before the limits an
     * 8 MB line took about 40 s here (the parser copied its whole window for every 1,024 characters
     * read); now well under a second. The bound is generous so that a busy machine does not fail it;
     * bench/manifest-read has the figures, with a control of the same size in short lines.
     */
    @Test
    void aLongLineIsParsedInTimeLinearInItsSize() throws Exception {
        Path single = Files.writeString(dir.resolve("single.yaml"), longLine(8_000_000));
        long t0 = System.nanoTime();
        List<Problem> problems = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> problemsOf(single, 16L << 20));
        System.out.printf("8 MB in one line: read in %.2f s%n", (System.nanoTime() - t0) / 1e9);
        // Read to the end of the line, then refused for the object's size.
        assertThat(problems)
                .extracting(Problem::toString)
                .containsExactly(single
                        + " (document 1): is at least 7,999,948 characters long, over the API server's limit of 3,145,728 (3 MiB) per object;"
                        + " read no further");
        // An object just within the limit, in one line, is read.
        Path within = Files.writeString(dir.resolve("within.yaml"), longLine(3_000_000));
        assertThat(ManifestReader.read(List.of(within))).hasSize(1);
    }

    @Test
    void anObjectOverThreeMebibytesIsRefusedAndAListMayHoldMoreThanThat() throws Exception {
        // A List of 3 Services of about 2 MB each (6 MB in all) is fine; an item of 3.5 MB is not.
        String items = "apiVersion: v1\nkind: List\nitems:\n" + item("a", 2_000_000) + item("b", 2_000_000)
                + item("c", 2_000_000);
        List<ManifestDocument> docs = ManifestReader.read(List.of(Files.writeString(dir.resolve("list.yaml"), items)));
        assertThat(docs)
                .extracting(ManifestDocument::source)
                .containsExactly(
                        dir.resolve("list.yaml") + " (document 1, items[0])",
                        dir.resolve("list.yaml") + " (document 1, items[1])",
                        dir.resolve("list.yaml") + " (document 1, items[2])");

        Path big = Files.writeString(
                dir.resolve("big.yaml"), "kind: List\nitems:\n" + item("a", 10) + item("b", 3_500_000));
        assertThatThrownBy(() -> ManifestReader.read(List.of(big)))
                .isInstanceOfSatisfying(
                        ManifestException.class,
                        e -> assertThat(e.problems())
                                .extracting(Problem::toString)
                                .singleElement()
                                .satisfies(
                                        p -> assertThat(p)
                                                .startsWith(big + " (document 1, items[1]): is at least 3,500,")
                                                .endsWith(
                                                        "characters long, over the API server's limit of 3,145,728 (3 MiB) per object; read no further")));
    }

    private static String item(String name, int annotationBytes) {
        return "- kind: Service\n  metadata:\n    name: " + name + "\n    namespace: shop\n    annotations: {note: "
                + "x".repeat(annotationBytes) + "}\n  spec: {ports: [{port: 80}]}\n";
    }

    @Test
    void aTextOverTheLimitIsRefusedByParseToo() {
        assertThatThrownBy(() -> ManifestReader.parse("in.yaml", longLine(9_000_000)))
                .isInstanceOfSatisfying(
                        ManifestException.class,
                        e -> assertThat(e.problems())
                                .singleElement()
                                .satisfies(p -> assertThat(p.toString()).startsWith("in.yaml: is 9,000,000 bytes")));
    }

    @Test
    void aFileThatIsNotUtf8IsNamed() throws Exception {
        Path file =
                Files.write(dir.resolve("latin1.yaml"), new byte[] {'k', 'i', 'n', 'd', ':', ' ', (byte) 0xe9, '\n'});
        assertThat(problemsOf(file, ManifestReader.DEFAULT_MAX_FILE_BYTES))
                .extracting(Problem::toString)
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

    // ---- per object, in the decoder ----

    private static List<String> problems(String yaml) throws ManifestException {
        Decoded d = ManifestDecoder.decode(ManifestReader.parse("in.yaml", yaml).get(0));
        return d instanceof Decoded.Rejected r
                ? r.problems().stream().map(Problem::toString).toList()
                : List.of();
    }

    @Test
    void annotationsHoldAtMost256KibibytesTogether() throws Exception {
        // Keys count too: "a" + "b" = 2 bytes, so values of 262,142 bytes in all are just within.
        String within = "metadata: {name: web, namespace: shop, annotations: {a: " + "x".repeat(131_071) + ", b: "
                + "y".repeat(131_071) + "}}\n";
        assertThat(problems("kind: Service\n" + within + SERVICE_SPEC)).isEmpty();
        String over = within.replace("x".repeat(131_071), "x".repeat(131_072));
        assertThat(problems("kind: Service\n" + over + SERVICE_SPEC))
                .containsExactly(
                        "in.yaml (document 1): Service shop/web: metadata.annotations: hold 262,145 bytes in all,"
                                + " over the limit of 262,144 (256 KiB) per object");
        // Bytes of UTF-8, as the API server counts them: 87,382 three-byte characters are 262,146 bytes.
        assertThat(problems("kind: Service\nmetadata: {name: web, namespace: shop, annotations: {n: "
                        + "\u20ac".repeat(87_382) + "}}\n" + SERVICE_SPEC))
                .singleElement()
                .satisfies(p -> assertThat(p).contains("hold 262,147 bytes in all"));
    }

    @Test
    void labelsAndAnnotationKeysFollowTheApiServersRules() throws Exception {
        String v63 = "v".repeat(63);
        assertThat(problems("kind: Node\nmetadata: {name: n1, labels: {example.com/" + "k".repeat(63) + ": " + v63
                        + ", plain: '', A_b.c: x-Y_z}}\n"))
                .isEmpty();
        assertThat(problems("""
                kind: Node
                metadata:
                  name: n1
                  labels: {topology.kubernetes.io/zone: %s, "Example.com/x": y, "-bad": y, "a/b/c": y, ok: "-x"}
                  annotations: {"has space": y, Rulesync.IO/Note: fine}
                """.formatted("z".repeat(64))))
                .containsExactlyInAnyOrder(
                        "in.yaml (document 1): Node n1: metadata.labels.topology.kubernetes.io/zone: is 64 characters long, over the limit of 63 for a label value",
                        "in.yaml (document 1): Node n1: metadata.labels.Example.com/x: the key's prefix 'Example.com' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)",
                        "in.yaml (document 1): Node n1: metadata.labels.-bad: the key's name '-bad' is not a qualified name (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
                        "in.yaml (document 1): Node n1: metadata.labels.a/b/c: the key's name 'b/c' is not a qualified name (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
                        "in.yaml (document 1): Node n1: metadata.labels.ok: '-x' is not a label value (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
                        "in.yaml (document 1): Node n1: metadata.annotations.has space: the key's name 'has space' is not a qualified name (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)");
    }

    @Test
    void aKeyWithAControlCharacterIsQuotedInTheFieldPath() throws Exception {
        assertThat(problems("kind: Node\nmetadata: {name: n1, labels: {\"a\\nb\": x}}\n"))
                .singleElement()
                .satisfies(p -> assertThat(p)
                        .startsWith("in.yaml (document 1): Node n1: metadata.labels.a\\x0ab: ")
                        .doesNotContain("\n"));
    }

    @Test
    void anEndpointSliceHoldsAtMost1000EndpointsOf100AddressesEach() throws Exception {
        String head = "kind: EndpointSlice\napiVersion: discovery.k8s.io/v1\n"
                + "metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nendpoints:\n";
        StringBuilder thousand = new StringBuilder(head);
        for (int i = 0; i < 1000; i++) {
            thousand.append("- addresses: [10.1.")
                    .append(i / 250)
                    .append('.')
                    .append(i % 250 + 1)
                    .append("]\n");
        }
        assertThat(problems(thousand.toString())).isEmpty();
        assertThat(problems(thousand + "- addresses: [10.2.0.1]\n"))
                .containsExactly(
                        "in.yaml (document 1): EndpointSlice shop/web-1: endpoints: holds 1,001 endpoints, over the limit of 1,000 per EndpointSlice");
        String addresses = String.join(", ", java.util.Collections.nCopies(101, "10.3.0.1"));
        assertThat(problems(head + "- addresses: [" + addresses + "]\n"))
                .containsExactly(
                        "in.yaml (document 1): EndpointSlice shop/web-1: endpoints[0].addresses: holds 101 addresses, over the limit of 100 per endpoint");
    }

    @Test
    void objectsOfOtherKindsAreNotChecked() throws Exception {
        assertThat(ManifestDecoder.decode(new ManifestDocument(
                        "in.yaml",
                        Map.of(
                                "kind",
                                "ConfigMap",
                                "metadata",
                                Map.of("name", "x", "annotations", Map.of("big", "x".repeat(300_000)))))))
                .isInstanceOf(Decoded.Skipped.class);
    }
}
