package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Manifests are read object by object: the items of a List are handed on as each ends, whatever comes after them, and
 * what a whole document would have meant is kept (kubectl's key order, JSON, Lists inside objects, empty Lists).
 */
class ManifestStreamingTest {
    private final List<ManifestDocument> read = new ArrayList<>();
    private final List<Problem> problems = new ArrayList<>();

    private void parse(String text) {
        ManifestParser.parseEach("in.yaml", new StringReader(text), text.length(), read::add, problems);
    }

    private List<String> names() {
        return read.stream()
                .map(d -> (String) ((Map<?, ?>) d.content().get("metadata")).get("name"))
                .toList();
    }

    @Test
    void theItemsOfAListAreHandedOnBeforeTheRestOfTheStreamIsRead() {
        itemsComeBeforeAFailure(
                "apiVersion: v1\nitems:\n- {kind: Service, metadata: {name: a}}\n- {kind: Service, metadata: {name: b}}\n"
                        + "- {kind: Service, metadata: {name: c");
    }

    @Test
    void soAreThoseOfAJsonList() {
        itemsComeBeforeAFailure(
                "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\"kind\": \"Service\", \"metadata\": {\"name\": \"a\"}},\n"
                        + "    {\"kind\": \"Service\", \"metadata\": {\"name\": \"b\"}},\n    {\"kind\": \"Service\", \"metadata\": {\"name\": \"c");
    }

    private void itemsComeBeforeAFailure(String head) {
        // The stream fails in its third item: the first two were taken already.
        Reader failing = new Reader() {
            private final Reader first = new StringReader(head);

            @Override
            public int read(char[] buf, int off, int len) throws IOException {
                int n = first.read(buf, off, len);
                if (n < 0) {
                    throw new IOException("the disk went away");
                }
                return n;
            }

            @Override
            public void close() {}
        };
        try {
            ManifestParser.parseEach("in.yaml", failing, -1, read::add, problems);
        } catch (UncheckedIOException e) {
            assertThat(e.getCause()).hasMessage("the disk went away");
        }
        assertThat(names()).containsExactly("a", "b");
    }

    @Test
    void kubectlsOrderWithItemsBeforeKindIsAList() {
        parse("""
                apiVersion: v1
                items:
                - apiVersion: v1
                  kind: Service
                  metadata: {name: web, namespace: shop}
                - apiVersion: v1
                  kind: Node
                  metadata: {name: n1}
                kind: List
                metadata:
                  resourceVersion: ""
                ---
                kind: Service
                metadata: {name: after, namespace: shop}
                """);
        assertThat(problems).isEmpty();
        assertThat(read)
                .extracting(ManifestDocument::source)
                .containsExactly(
                        "in.yaml (document 1, items[0])", "in.yaml (document 1, items[1])", "in.yaml (document 2)");
        assertThat(names()).containsExactly("web", "n1", "after");
    }

    @Test
    void jsonOnOneLineIsReadItemByItem() {
        parse(
                "{\"apiVersion\":\"v1\",\"items\":[{\"kind\":\"Service\",\"metadata\":{\"name\":\"a\",\"namespace\":\"shop\"}},"
                        + "{\"kind\":\"Service\",\"metadata\":{\"name\":\"b\",\"namespace\":\"shop\",\"labels\":{\"x\":\"yes\"}}}],\"kind\":\"List\"}");
        assertThat(problems).isEmpty();
        assertThat(names()).containsExactly("a", "b");
        assertThat(((Map<?, ?>) ((Map<?, ?>) read.get(1).content().get("metadata")).get("labels")).get("x"))
                .isEqualTo("yes");
    }

    @Test
    void onlyTheDocumentsOwnItemsAreSplitAndAnEmptyListHoldsNothing() {
        parse("""
                kind: ServiceList
                items:
                - kind: Service
                  metadata: {name: web, namespace: shop}
                  spec: {items: [1, 2]}
                ---
                kind: List
                items: []
                """);
        assertThat(problems).isEmpty();
        assertThat(read)
                .singleElement()
                .satisfies(d -> assertThat(d.content().get("spec")).isEqualTo(Map.of("items", List.of(1, 2))));
    }

    @Test
    void itemsOutsideAListAreAProblemNamingTheDocumentAndItsKind() {
        parse("kind: Service\nmetadata: {name: web}\nitems:\n- {kind: Service, metadata: {name: a}}\n");
        assertThat(problems)
                .extracting(Problem::toString)
                .containsExactly(
                        "in.yaml (document 1): items: only a List (kind: List, ServiceList, ...) holds items; this document's kind is Service");
    }

    @Test
    void whatIsWrongInOneItemIsNamedByItsPlace() {
        parse(
                "kind: List\nitems:\n- {kind: Service, metadata: {name: a}}\n- just a string\n- {kind: Service, metadata: {name: a, name: b}}\n");
        assertThat(names()).containsExactly("a");
        assertThat(problems).extracting(Problem::source).containsExactly("in.yaml (document 1, items[1])", "in.yaml");
        assertThat(problems.get(1).message())
                .startsWith("not valid YAML or JSON: ")
                .contains("duplicate key name");
    }

    @Test
    void anAnchorIsNotSharedBetweenItemsButAnAnchoredListIsReadWhole() {
        parse("kind: List\nitems:\n- {kind: Service, metadata: &m {name: a}}\n- {kind: Service, metadata: *m}\n");
        assertThat(problems)
                .singleElement()
                .satisfies(p -> assertThat(p.message()).contains("m"));

        read.clear();
        problems.clear();
        parse("kind: List\nitems: &all\n- {kind: Service, metadata: {name: a}}\n");
        assertThat(problems).isEmpty();
        assertThat(names()).containsExactly("a");
    }

    @Test
    void aTokenThatNeverEndsIsRefusedOnceItIsLongerThanAnyObject() {
        // An annotation whose value goes on for ever: the read stops a few MiB in, where the parser would have held it
        // all.
        long[] delivered = {0};
        Reader endless = new Reader() {
            private final Reader head =
                    new StringReader("kind: Service\nmetadata:\n  name: x\n  annotations:\n    big: ");

            @Override
            public int read(char[] buf, int off, int len) throws IOException {
                int n = head.read(buf, off, len);
                if (n < 0) {
                    java.util.Arrays.fill(buf, off, off + len, 'a');
                    n = len;
                }
                delivered[0] += n;
                return n;
            }

            @Override
            public void close() {}
        };
        ManifestParser.parseEach("in.yaml", endless, -1, read::add, problems);
        assertThat(read).isEmpty();
        assertThat(problems)
                .singleElement()
                .satisfies(
                        p -> assertThat(p.toString())
                                .startsWith("in.yaml (document 1): is at least ")
                                .endsWith(
                                        " characters long, over the API server's limit of 3,145,728 (3 MiB) per object; read no further"));
        assertThat(delivered[0]).isLessThan(16L << 20);
    }
}
