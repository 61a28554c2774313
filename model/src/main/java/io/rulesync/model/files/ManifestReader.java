package io.rulesync.model.files;

import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestParser;
import io.rulesync.model.manifest.Problem;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads Kubernetes manifests from YAML or JSON files, or folders of them (recursively, in path
 * order); the text is parsed by {@link ManifestParser}. This class is the file-touching half of
 * manifest reading, kept out of the pure model packages (see ARCHITECTURE.md, "Purity").
 *
 * <p>Sizes are bounded: a file larger than the limit ({@link #DEFAULT_MAX_FILE_BYTES} unless the
 * caller says otherwise) is refused before it is read, and an object larger than the API server's
 * request limit ({@link #MAX_OBJECT_CHARS}) is refused by the parser.
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
    public static final long DEFAULT_MAX_FILE_BYTES = ManifestParser.MAX_TEXT_CHARS;

    /**
     * The largest object, in characters of its source text: the API server's limit on a request
     * body (3 MiB). etcd stores at most 1.5 MiB per object, so no real object comes near it.
     */
    public static final int MAX_OBJECT_CHARS = ManifestParser.MAX_OBJECT_CHARS;

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

    /** Objects in one YAML/JSON text: {@link ManifestParser#parse}, here too for callers that read both files and texts. */
    public static List<ManifestDocument> parse(String sourceName, String text) throws ManifestException {
        return ManifestParser.parse(sourceName, text);
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
                problems.add(ManifestParser.tooLarge(name, size, maxFileBytes));
                return;
            }
            try (InputStream in = Files.newInputStream(file)) {
                bytes = in.readNBytes((int) maxFileBytes + 1);
            }
            if (bytes.length > maxFileBytes) {
                problems.add(ManifestParser.tooLarge(name, Math.max(bytes.length, Files.size(file)), maxFileBytes));
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
        ManifestParser.parseInto(name, text, out, problems);
    }

}
