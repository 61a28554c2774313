package io.rulesync.model.manifest;

import io.rulesync.model.cluster.KubernetesNames;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.constructor.StandardConstructor;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Reads Kubernetes manifests: YAML or JSON files, or folders of them (recursively, in path order),
 * multi-document YAML, and {@code kind: List} (or {@code ServiceList} etc.) wrappers.
 *
 * <p>YAML 1.2 is used, so {@code yes}/{@code no} stay strings, and duplicate keys, recursive aliases
 * and alias bombs are refused rather than guessed at.
 *
 * <p>Sizes are bounded: a file larger than the limit ({@link #DEFAULT_MAX_FILE_BYTES} unless the
 * caller says otherwise) is refused before it is read, and an object (a document, or one item of a
 * {@code kind: List}) larger than the API server's request limit is refused. Reading takes time
 * linear in the size: the whole file is handed to the parser as one window (see {@link #settings}).
 */
public final class ManifestReader {
    /**
     * The largest file read unless the caller sets another limit: 4 MiB. Any object fits (at most
     * 3 MiB, below), and so does a {@code kind: List} of some 25,000 compact Services. Memory is
     * what bounds it: parsing holds the whole document's node tree with its marks, about 60 bytes
     * per byte of a List of small objects, so 4 MiB costs some 250 MB at the peak, and the watcher
     * reads two files at a time per cluster. Larger sets belong in several files (folders are read
     * recursively, and the watcher re-reads only the files that changed).
     */
    public static final long DEFAULT_MAX_FILE_BYTES = 4L << 20;

    /**
     * The largest object, in characters of its source text: the API server's limit on a request
     * body (3 MiB). etcd stores at most 1.5 MiB per object, so no real object comes near it.
     */
    public static final int MAX_OBJECT_CHARS = 3 << 20;

    /** The highest file limit a caller may set (a file is read whole, at up to about 60 bytes of memory per byte). */
    public static final long MAX_FILE_LIMIT = 1L << 30;

    private ManifestReader() {
    }

    /** Every object in the given files and folders, in a stable order; files over the default limit are refused. */
    public static List<ManifestDocument> read(List<Path> paths) throws ManifestException {
        return read(paths, DEFAULT_MAX_FILE_BYTES);
    }

    /** Every object in the given files and folders, in a stable order; files over {@code maxFileBytes} are refused. */
    public static List<ManifestDocument> read(List<Path> paths, long maxFileBytes) throws ManifestException {
        if (maxFileBytes < 1 || maxFileBytes > MAX_FILE_LIMIT) {
            throw new IllegalArgumentException("maxFileBytes " + maxFileBytes + " is out of range (1 to " + MAX_FILE_LIMIT + ")");
        }
        List<Problem> problems = new ArrayList<>();
        List<ManifestDocument> out = new ArrayList<>();
        for (Path p : paths) {
            for (Path file : expand(p, problems)) {
                readFile(file, maxFileBytes, out, problems);
            }
        }
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return out;
    }

    /**
     * Objects in one YAML/JSON text; {@code sourceName} is used in problem locations. A text longer
     * than {@link #DEFAULT_MAX_FILE_BYTES} characters is refused as a file of that size would be.
     */
    public static List<ManifestDocument> parse(String sourceName, String text) throws ManifestException {
        List<Problem> problems = new ArrayList<>();
        List<ManifestDocument> out = new ArrayList<>();
        if (text.length() > DEFAULT_MAX_FILE_BYTES) {
            throw new ManifestException(tooLarge(sourceName, text.length(), DEFAULT_MAX_FILE_BYTES));
        }
        parseInto(sourceName, text, out, problems);
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return out;
    }

    private static List<Path> expand(Path p, List<Problem> problems) {
        if (!Files.exists(p)) {
            problems.add(new Problem(p.toString(), "", "", "no such file or folder"));
            return List.of();
        }
        if (!Files.isDirectory(p)) {
            return List.of(p);
        }
        try {
            return manifestFiles(p);
        } catch (IOException e) {
            problems.add(new Problem(p.toString(), "", "", "cannot list folder: " + e.getMessage()));
            return List.of();
        }
    }

    /**
     * The manifests in a folder, recursively, in path order: regular {@code .yaml}, {@code .yml} and
     * {@code .json} files that are not hidden. The one rule for "which files count", shared by
     * {@code compile -f} and the watcher's manifest-folder source.
     */
    public static List<Path> manifestFiles(Path folder) throws IOException {
        try (Stream<Path> walk = Files.walk(folder)) {
            return walk.filter(Files::isRegularFile)
                    .filter(f -> !f.getFileName().toString().startsWith("."))
                    .filter(ManifestReader::isManifestName)
                    .sorted()
                    .toList();
        }
    }

    private static boolean isManifestName(Path f) {
        String n = f.getFileName().toString().toLowerCase();
        return n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json");
    }

    private static void readFile(Path file, long maxFileBytes, List<ManifestDocument> out, List<Problem> problems) {
        String name = file.toString();
        byte[] bytes;
        try {
            // Checked before reading, and the read itself stops past the limit (the file may grow meanwhile).
            long size = Files.size(file);
            if (size > maxFileBytes) {
                problems.add(tooLarge(name, size, maxFileBytes));
                return;
            }
            try (InputStream in = Files.newInputStream(file)) {
                bytes = in.readNBytes((int) maxFileBytes + 1);
            }
            if (bytes.length > maxFileBytes) {
                problems.add(tooLarge(name, Math.max(bytes.length, Files.size(file)), maxFileBytes));
                return;
            }
        } catch (IOException e) {
            problems.add(new Problem(name, "", "", "cannot read: " + e.getMessage()));
            return;
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            problems.add(new Problem(name, "", "", "not valid UTF-8"));
            return;
        }
        parseInto(name, text, out, problems);
    }

    private static Problem tooLarge(String name, long size, long limit) {
        return new Problem(name, "", "", "is " + size(size) + ", over the limit of " + size(limit)
                + " per file; split it into several files");
    }

    /** {@code 10,485,760 bytes (10.0 MiB)}: exact, and readable. */
    static String size(long bytes) {
        return bytes < (1 << 20) ? String.format(Locale.ROOT, "%,d bytes", bytes)
                : String.format(Locale.ROOT, "%,d bytes (%.1f MiB)", bytes, bytes / (1024.0 * 1024.0));
    }

    private static void parseInto(String name, String text, List<ManifestDocument> out, List<Problem> problems) {
        LoadSettings settings = settings(name, text.length());
        StandardConstructor constructor = new StandardConstructor(settings);
        try {
            int index = 0;
            for (Node node : new Compose(settings).composeAllFromString(text)) {
                index++;
                addDocument(name, index, node, constructor.constructSingleDocument(Optional.of(node)), out, problems);
            }
        } catch (YamlEngineException e) {
            problems.add(new Problem(name, "", "", "not valid YAML or JSON: " + oneLine(e.getMessage())));
        }
    }

    /**
     * The parser reads its input through a window that it grows by {@code bufferSize} characters at a
     * time, copying the part not yet consumed each time; a token (a scalar, a flow collection) keeps
     * the window from moving, so one long line costs time quadratic in its length (10 MB: about a
     * minute). A buffer as large as the whole text fills the window once.
     */
    private static LoadSettings settings(String label, int length) {
        return LoadSettings.builder()
                .setLabel(label)
                .setAllowDuplicateKeys(false)
                .setAllowRecursiveKeys(false)
                .setMaxAliasesForCollections(64)
                .setCodePointLimit(Integer.MAX_VALUE) // sizes are checked here: files before reading, objects after
                .setBufferSize(length + 1)
                .build();
    }

    private static void addDocument(String name, int index, Node node, Object doc, List<ManifestDocument> out,
            List<Problem> problems) {
        String source = name + " (document " + index + ")";
        if (doc == null) {
            return; // an empty document, e.g. a trailing "---"
        }
        if (!(doc instanceof Map<?, ?> map)) {
            problems.add(new Problem(source, "", "", "expected a Kubernetes object (a mapping), found "
                    + FieldReader.describe(doc)));
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
            List<Node> itemNodes = itemNodes(node);
            for (int i = 0; i < items.size(); i++) {
                String itemSource = name + " (document " + index + ", items[" + i + "])";
                if (items.get(i) instanceof Map<?, ?> item) {
                    Map<String, Object> itemObj = stringKeyed(item, itemSource, problems);
                    if (itemObj != null && fits(itemSource, itemObj, i < itemNodes.size() ? itemNodes.get(i) : null, problems)) {
                        out.add(new ManifestDocument(itemSource, itemObj));
                    }
                } else {
                    problems.add(new Problem(itemSource, "", "", "expected a Kubernetes object (a mapping)"));
                }
            }
        } else if (fits(source, obj, node, problems)) {
            out.add(new ManifestDocument(source, obj));
        }
    }

    /** The nodes of a List's {@code items}, to measure each item's source text. */
    private static List<Node> itemNodes(Node list) {
        if (list instanceof MappingNode m) {
            for (NodeTuple t : m.getValue()) {
                if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("items")
                        && t.getValueNode() instanceof SequenceNode seq) {
                    return seq.getValue();
                }
            }
        }
        return List.of();
    }

    /** Whether an object's source text is within {@link #MAX_OBJECT_CHARS}; reports it when not. */
    private static boolean fits(String source, Map<String, Object> obj, Node node, List<Problem> problems) {
        if (node == null || node.getStartMark().isEmpty() || node.getEndMark().isEmpty()) {
            return true;
        }
        long chars = (long) node.getEndMark().get().getIndex() - node.getStartMark().get().getIndex();
        if (chars <= MAX_OBJECT_CHARS) {
            return true;
        }
        problems.add(new Problem(source, identity(obj), "", String.format(Locale.ROOT,
                "is %,d characters long, over the API server's limit of %,d (3 MiB) per object", chars, MAX_OBJECT_CHARS)));
        return false;
    }

    /** {@code Service shop/web} as far as the object says it, for a problem found before decoding. */
    private static String identity(Map<String, Object> obj) {
        if (!(obj.get("kind") instanceof String kind) || !(obj.get("metadata") instanceof Map<?, ?> meta)
                || !(meta.get("name") instanceof String n)) {
            return "";
        }
        String namespace = meta.get("namespace") instanceof String ns ? ns : "default";
        return KubernetesNames.printable(kind + " " + (kind.equals("Node") ? n : namespace + "/" + n));
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
