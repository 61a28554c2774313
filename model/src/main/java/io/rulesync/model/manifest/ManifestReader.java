package io.rulesync.model.manifest;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Reads Kubernetes manifests: YAML or JSON files, or folders of them (recursively, in path order),
 * multi-document YAML, and {@code kind: List} (or {@code ServiceList} etc.) wrappers.
 *
 * <p>YAML 1.2 is used, so {@code yes}/{@code no} stay strings, and duplicate keys, recursive aliases
 * and alias bombs are refused rather than guessed at.
 */
public final class ManifestReader {
    private static final int MAX_FILE_CODE_POINTS = 64 * 1024 * 1024;

    private ManifestReader() {
    }

    /** Every object in the given files and folders, in a stable order. */
    public static List<ManifestDocument> read(List<Path> paths) throws ManifestException {
        List<Problem> problems = new ArrayList<>();
        List<ManifestDocument> out = new ArrayList<>();
        for (Path p : paths) {
            for (Path file : expand(p, problems)) {
                readFile(file, out, problems);
            }
        }
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return out;
    }

    /** Objects in one YAML/JSON text; {@code sourceName} is used in problem locations. */
    public static List<ManifestDocument> parse(String sourceName, String text) throws ManifestException {
        List<Problem> problems = new ArrayList<>();
        List<ManifestDocument> out = new ArrayList<>();
        try {
            addDocuments(sourceName, load(sourceName).loadAllFromString(text), out, problems);
        } catch (YamlEngineException e) {
            problems.add(new Problem(sourceName, "", "", "not valid YAML or JSON: " + oneLine(e.getMessage())));
        }
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

    private static void readFile(Path file, List<ManifestDocument> out, List<Problem> problems) {
        String name = file.toString();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            addDocuments(name, load(name).loadAllFromReader(r), out, problems);
        } catch (IOException e) {
            problems.add(new Problem(name, "", "", "cannot read: " + e.getMessage()));
        } catch (YamlEngineException e) {
            problems.add(new Problem(name, "", "", "not valid YAML or JSON: " + oneLine(e.getMessage())));
        }
    }

    private static Load load(String label) {
        return new Load(LoadSettings.builder()
                .setLabel(label)
                .setAllowDuplicateKeys(false)
                .setAllowRecursiveKeys(false)
                .setMaxAliasesForCollections(64)
                .setCodePointLimit(MAX_FILE_CODE_POINTS)
                .build());
    }

    private static void addDocuments(String name, Iterable<Object> docs, List<ManifestDocument> out, List<Problem> problems) {
        int index = 0;
        for (Object doc : docs) {
            index++;
            String source = name + " (document " + index + ")";
            if (doc == null) {
                continue; // an empty document, e.g. a trailing "---"
            }
            if (!(doc instanceof Map<?, ?> map)) {
                problems.add(new Problem(source, "", "", "expected a Kubernetes object (a mapping), found "
                        + FieldReader.describe(doc)));
                continue;
            }
            Map<String, Object> obj = stringKeyed(map, source, problems);
            if (obj == null) {
                continue;
            }
            Object kind = obj.get("kind");
            if (kind instanceof String k && k.endsWith("List") && obj.containsKey("items")) {
                if (!(obj.get("items") instanceof List<?> items)) {
                    problems.add(new Problem(source, k, "items", "expected a list"));
                    continue;
                }
                for (int i = 0; i < items.size(); i++) {
                    String itemSource = name + " (document " + index + ", items[" + i + "])";
                    if (items.get(i) instanceof Map<?, ?> item) {
                        Map<String, Object> itemObj = stringKeyed(item, itemSource, problems);
                        if (itemObj != null) {
                            out.add(new ManifestDocument(itemSource, itemObj));
                        }
                    } else {
                        problems.add(new Problem(itemSource, "", "", "expected a Kubernetes object (a mapping)"));
                    }
                }
            } else {
                out.add(new ManifestDocument(source, obj));
            }
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
