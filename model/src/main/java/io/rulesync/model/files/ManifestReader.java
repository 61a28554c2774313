package io.rulesync.model.files;

import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestParser;
import io.rulesync.model.manifest.Problem;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Reads Kubernetes manifests from YAML or JSON files, or folders of them (recursively, in path
 * order); the text is parsed by {@link ManifestParser}. This class is the file-touching half of
 * manifest reading, kept out of the pure model packages (see ARCHITECTURE.md, "Purity").
 *
 * <p>Files are read as they come: objects are handed on one by one, and memory is bounded by the largest object
 * ({@link #MAX_OBJECT_CHARS}, the API server's limit), not by the file, so a whole cluster's export in one file
 * ({@code kubectl get svc,endpointslices,nodes -A -o yaml}) is read as well as a folder of small files. A file larger
 * than the limit ({@link #DEFAULT_MAX_FILE_BYTES} unless the caller says otherwise) is refused before it is read.
 */
public final class ManifestReader {
    /**
     * The largest file read unless the caller sets another limit: 1 GiB, a safety net against a wrong path (a disk
     * image, a log) rather than a bound on memory, which the largest object sets. Reading takes time linear in the
     * size: about a second per 10 MB of a {@code kind: List} export (BENCHMARKS.md, "Reading manifests").
     */
    public static final long DEFAULT_MAX_FILE_BYTES = 1L << 30;

    /**
     * The largest object, in characters of its source text: the API server's limit on a request
     * body (3 MiB). etcd stores at most 1.5 MiB per object, so no real object comes near it.
     */
    public static final int MAX_OBJECT_CHARS = ManifestParser.MAX_OBJECT_CHARS;

    /** The highest file limit a caller may set. */
    public static final long MAX_FILE_LIMIT = 64L << 30;

    private ManifestReader() {}

    /** Every object in the given files and folders, in a stable order; files over the default limit are refused. */
    public static List<ManifestDocument> read(List<Path> paths) throws ManifestException {
        return read(paths, DEFAULT_MAX_FILE_BYTES);
    }

    /** Every object in the given files and folders, in a stable order; files over {@code maxFileBytes} are refused. */
    public static List<ManifestDocument> read(List<Path> paths, long maxFileBytes) throws ManifestException {
        List<ManifestDocument> out = new ArrayList<>();
        readEach(paths, maxFileBytes, out::add);
        return out;
    }

    /**
     * Hands every object of the given files and folders to {@code sink} as it is read, in a stable order, holding no more
     * of a file than its largest object; files over {@code maxFileBytes} are refused. Problems are thrown together at
     * the end, so when this throws, {@code sink} may have taken objects of the input: drop them, as the input is
     * refused whole.
     */
    public static void readEach(List<Path> paths, long maxFileBytes, Consumer<ManifestDocument> sink)
            throws ManifestException {
        if (maxFileBytes < 1 || maxFileBytes > MAX_FILE_LIMIT) {
            throw new IllegalArgumentException(
                    "maxFileBytes " + maxFileBytes + " is out of range (1 to " + MAX_FILE_LIMIT + ")");
        }
        List<Problem> problems = new ArrayList<>();
        for (Path p : paths) {
            for (Path file : expand(p, problems)) {
                readFile(file, maxFileBytes, sink, problems);
            }
        }
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
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

    private static void readFile(
            Path file, long maxFileBytes, Consumer<ManifestDocument> sink, List<Problem> problems) {
        String name = file.toString();
        try {
            // Checked before reading, and again as it is read (the file may grow meanwhile).
            long size = Files.size(file);
            if (size > maxFileBytes) {
                problems.add(ManifestParser.tooLarge(name, size, maxFileBytes));
                return;
            }
            try (InputStream in = new BoundedInput(Files.newInputStream(file), maxFileBytes);
                    Reader text = new InputStreamReader(
                            in,
                            StandardCharsets.UTF_8
                                    .newDecoder()
                                    .onMalformedInput(CodingErrorAction.REPORT)
                                    .onUnmappableCharacter(CodingErrorAction.REPORT))) {
                ManifestParser.parseEach(name, text, size, sink, problems);
            }
        } catch (GrewPastLimit e) {
            problems.add(ManifestParser.tooLarge(name, e.read, maxFileBytes));
        } catch (UncheckedIOException e) {
            problems.add(readProblem(name, e.getCause()));
        } catch (IOException e) {
            problems.add(readProblem(name, e));
        }
    }

    private static Problem readProblem(String name, IOException e) {
        return new Problem(
                name,
                "",
                "",
                e instanceof CharacterCodingException ? "not valid UTF-8" : "cannot read: " + e.getMessage());
    }

    /** The file grew past the limit while it was read. */
    private static final class GrewPastLimit extends RuntimeException {
        final long read;

        GrewPastLimit(long read) {
            super(null, null, false, false);
            this.read = read;
        }
    }

    /** Stops a read past the limit, however large the file has become since its size was checked. */
    private static final class BoundedInput extends FilterInputStream {
        private final long limit;
        private long read;

        BoundedInput(InputStream in, long limit) {
            super(in);
            this.limit = limit;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            count(b < 0 ? -1 : 1);
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            count(n);
            return n;
        }

        private void count(int n) {
            if (n > 0 && (read += n) > limit) {
                throw new GrewPastLimit(read);
            }
        }
    }
}
