package io.rulesync.testing.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The build's line of what was skipped and why, summed over the modules' test JVMs
 * ({@link SkipReportListener} leaves one file per module). The last module of the reactor runs it
 * at {@code verify}: {@code BuildSkipReport FOLDER BUILD_START}. Files older than the build's start
 * belong to modules this build did not test (say, with {@code -pl}) and are left out; when no
 * module was tested, it prints nothing.
 */
public final class BuildSkipReport {
    private BuildSkipReport() {}

    public static void main(String[] args) {
        line(Path.of(args[0]), Instant.parse(args[1])).ifPresent(System.out::println);
    }

    static Optional<String> line(Path folder, Instant buildStart) {
        List<Path> reports = reports(folder, buildStart);
        if (reports.isEmpty()) {
            return Optional.empty();
        }
        SkippedTests skipped = new SkippedTests();
        reports.forEach(skipped::load);
        return Optional.of("all " + reports.size() + " tested modules: " + skipped.summary());
    }

    private static List<Path> reports(Path folder, Instant start) {
        if (!Files.isDirectory(folder)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(f -> f.toString().endsWith(".tsv"))
                    .filter(f -> !modified(f).isBefore(start))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Instant modified(Path f) {
        try {
            return Files.getLastModifiedTime(f).toInstant();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
