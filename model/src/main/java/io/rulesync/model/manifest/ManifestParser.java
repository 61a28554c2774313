package io.rulesync.model.manifest;

import java.io.FilterReader;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.constructor.StandardConstructor;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

/**
 * Parses Kubernetes manifests from text: multi-document YAML or JSON, and {@code kind: List} (or
 * {@code ServiceList} etc.) wrappers. Reading files and folders is {@code io.rulesync.model.files.ManifestReader}'s
 * job; this class touches no file, so it belongs to the pure model.
 *
 * <p>YAML 1.2 is used, so {@code yes}/{@code no} stay strings, and duplicate keys, recursive aliases
 * and alias bombs are refused rather than guessed at. An object (a document, or one item of a
 * {@code kind: List}) larger than the API server's request limit is refused. Parsing takes time
 * linear in the size, and memory bounded by the largest object (see {@link #parseEach}).
 */
public final class ManifestParser {
    /**
     * The longest text {@link #parse} takes: 4 Mi characters. A text is in memory already; files are read as streams
     * ({@code io.rulesync.model.files.ManifestReader}), whatever their size.
     */
    public static final long MAX_TEXT_CHARS = 4L << 20;

    /**
     * The largest object, in characters of its source text: the API server's limit on a request
     * body (3 MiB). etcd stores at most 1.5 MiB per object, so no real object comes near it.
     */
    public static final int MAX_OBJECT_CHARS = 3 << 20;

    private ManifestParser() {}

    /**
     * Objects in one YAML/JSON text; {@code sourceName} is used in problem locations. A text longer
     * than {@link #MAX_TEXT_CHARS} characters is refused as a file of that size would be.
     */
    public static List<ManifestDocument> parse(String sourceName, String text) throws ManifestException {
        List<Problem> problems = new ArrayList<>();
        List<ManifestDocument> out = new ArrayList<>();
        if (text.length() > MAX_TEXT_CHARS) {
            throw new ManifestException(tooLarge(sourceName, text.length(), MAX_TEXT_CHARS));
        }
        parseInto(sourceName, text, out, problems);
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return out;
    }

    /** The problem for a text or file over a size limit. */
    public static Problem tooLarge(String name, long size, long limit) {
        return new Problem(
                name,
                "",
                "",
                "is " + size(size) + ", over the limit of " + size(limit) + " per file; split it into several files");
    }

    /** {@code 10,485,760 bytes (10.0 MiB)}: exact, and readable. */
    static String size(long bytes) {
        return bytes < (1 << 20)
                ? String.format(Locale.ROOT, "%,d bytes", bytes)
                : String.format(Locale.ROOT, "%,d bytes (%.1f MiB)", bytes, bytes / (1024.0 * 1024.0));
    }

    /** Adds the text's objects to {@code out} and what is wrong to {@code problems}; the caller bounds the text's length. */
    public static void parseInto(String name, String text, List<ManifestDocument> out, List<Problem> problems) {
        parseEach(name, new StringReader(text), text.length(), out::add, problems);
    }

    /**
     * Hands each object of a YAML/JSON stream to {@code sink} as soon as it has been read, and adds what is wrong to
     * {@code problems}. Memory is bounded by the largest object, not by the stream: the items of a {@code kind: List}
     * are read one at a time (see {@link ItemSplitter}), and an object past {@link #MAX_OBJECT_CHARS} ends the read as
     * soon as that is seen, even inside one long token. {@code length} is the stream's length in characters where known
     * (a file's size), or -1. When {@code problems} grew, {@code sink} may already have taken some of the stream's
     * objects: callers drop the whole stream's objects then, as a stream with problems is not read in part.
     */
    public static void parseEach(
            String name, Reader text, long length, Consumer<ManifestDocument> sink, List<Problem> problems) {
        // A window as large as the stream, up to an object's limit: any one token fits in it, so reading stays linear
        // (see settings), and a small file does not pay for a large window.
        int window = (int) Math.min(length < 0 ? MAX_OBJECT_CHARS : length, MAX_OBJECT_CHARS) + 1;
        LoadSettings settings = settings(name, window);
        ItemSplitter[] splitter = new ItemSplitter[1];
        Reader guarded = new FilterReader(text) {
            private long delivered;

            @Override
            public int read(char[] buf, int off, int len) throws IOException {
                // The parser's events lag what it has read by one token at most; a token this long is no object's.
                ItemSplitter events = splitter[0];
                if (events != null && delivered - events.consumed() > (long) MAX_OBJECT_CHARS + 2L * window) {
                    throw events.tooLarge(delivered - events.consumed());
                }
                int n;
                try {
                    n = super.read(buf, off, len);
                } catch (IOException e) {
                    throw new UncheckedIOException(
                            e); // the caller's to name (a file that cannot be read, or not UTF-8)
                }
                delivered += Math.max(n, 0);
                return n;
            }
        };
        splitter[0] = new ItemSplitter(new ParserImpl(settings, new StreamReader(settings, guarded)), MAX_OBJECT_CHARS);
        Composer composer = new Composer(settings, splitter[0]);
        StandardConstructor constructor = new StandardConstructor(settings);
        try {
            while (composer.hasNext()) {
                Node node = composer.next();
                Object value = constructor.constructSingleDocument(Optional.of(node));
                ItemSplitter.Piece piece = splitter[0].nextPiece();
                if (piece instanceof ItemSplitter.Piece.Item) {
                    addItem(piece.source(name), value, sink, problems);
                } else if (piece instanceof ItemSplitter.Piece.Rest r && r.items() >= 0) {
                    if (!(value instanceof Map<?, ?> m && m.get("kind") instanceof String k && k.endsWith("List"))) {
                        problems.add(new Problem(
                                piece.source(name),
                                "",
                                "items",
                                "only a List (kind: List, ServiceList, ...) holds " + "items; this document's kind is "
                                        + (value instanceof Map<?, ?> m && m.get("kind") instanceof String k
                                                ? k
                                                : "not given")));
                    }
                } else {
                    addDocument(name, piece.document(), value, sink, problems);
                }
            }
        } catch (ItemSplitter.TooLarge e) {
            problems.add(new Problem(
                    e.piece.source(name),
                    "",
                    "",
                    String.format(
                            Locale.ROOT,
                            "is at least %,d characters long, over the API server's limit of %,d (3 MiB) per object; read no further",
                            e.chars,
                            MAX_OBJECT_CHARS)));
        } catch (YamlEngineException e) {
            problems.add(new Problem(name, "", "", "not valid YAML or JSON: " + oneLine(e.getMessage())));
        }
    }

    /**
     * The parser reads its input through a window that it grows by {@code bufferSize} characters at a
     * time, copying the part not yet consumed each time; a token (a scalar, a flow collection) keeps
     * the window from moving, so one long line costs time quadratic in its length (10 MB: about a
     * minute). A buffer as large as the longest token (an object's limit at most) fills the window once per token.
     */
    private static LoadSettings settings(String label, int bufferSize) {
        return LoadSettings.builder()
                .setLabel(label)
                .setAllowDuplicateKeys(false)
                .setAllowRecursiveKeys(false)
                .setMaxAliasesForCollections(64)
                .setCodePointLimit(
                        Integer.MAX_VALUE) // sizes are checked here: files before reading, objects as they are read
                .setBufferSize(bufferSize)
                .build();
    }

    private static void addItem(String source, Object item, Consumer<ManifestDocument> sink, List<Problem> problems) {
        if (item instanceof Map<?, ?> map) {
            Map<String, Object> obj = stringKeyed(map, source, problems);
            if (obj != null) {
                sink.accept(new ManifestDocument(source, obj));
            }
        } else {
            problems.add(new Problem(source, "", "", "expected a Kubernetes object (a mapping)"));
        }
    }

    /**
     * A document composed whole: an object, or a List whose items were not read one by one (an anchored List). Sizes
     * were checked as it was read ({@link ItemSplitter}), so a whole document, and each item of it, is within the limit.
     */
    private static void addDocument(
            String name, int index, Object doc, Consumer<ManifestDocument> out, List<Problem> problems) {
        String source = name + " (document " + index + ")";
        if (doc == null) {
            return; // an empty document, e.g. a trailing "---"
        }
        if (!(doc instanceof Map<?, ?> map)) {
            problems.add(new Problem(
                    source, "", "", "expected a Kubernetes object (a mapping), found " + FieldReader.describe(doc)));
            return;
        }
        Map<String, Object> obj = stringKeyed(map, source, problems);
        if (obj == null) {
            return;
        }
        Object kind = obj.get("kind");
        if (kind instanceof String k && k.endsWith("List") && obj.containsKey("items")) {
            if (!(obj.get("items") instanceof List<?> items)) {
                problems.add(new Problem(source, k, "items", "expected a list"));
                return;
            }
            for (int i = 0; i < items.size(); i++) {
                addItem(new ItemSplitter.Piece.Item(index, i).source(name), items.get(i), out, problems);
            }
        } else {
            out.accept(new ManifestDocument(source, obj));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> stringKeyed(Map<?, ?> map, String source, List<Problem> problems) {
        for (Object key : map.keySet()) {
            if (!(key instanceof String)) {
                problems.add(new Problem(source, "", "", "keys must be strings, found " + FieldReader.describe(key)));
                return null;
            }
        }
        return (Map<String, Object>) map;
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*\\n\\s*", " ").strip();
    }
}
