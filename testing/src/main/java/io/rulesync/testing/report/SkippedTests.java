package io.rulesync.testing.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Skipped tests grouped by reason, with the classes they belong to, and the one line that says it:
 * {@code skipped 3 tests: 3 × needs a kernel with IPVS: ... (IpvsKernelTest, IpvsadmKernelNamespaceTest)}.
 * Saved as one tab-separated line per skip ({@code count, class, reason}) so that a build's modules
 * can be summed up.
 */
public final class SkippedTests {
    /** Enough class names to find the tests; the rest are counted. */
    private static final int NAMED_CLASSES = 6;

    private record Skip(int count, String className, String reason) {}

    private final List<Skip> skips = new ArrayList<>();

    public synchronized void add(String reason, String className, int count) {
        String oneLine = reason == null || reason.isBlank()
                ? "no reason given"
                : reason.strip().lines().findFirst().orElseThrow();
        skips.add(new Skip(count, className.replace('\t', ' '), oneLine.replace('\t', ' ')));
    }

    public synchronized int count() {
        return skips.stream().mapToInt(Skip::count).sum();
    }

    /** {@code skipped nothing}, or {@code skipped N tests: } then per reason, most first, {@code K × REASON (Classes)}. */
    public synchronized String summary() {
        if (skips.isEmpty()) {
            return "skipped nothing";
        }
        Map<String, List<Skip>> byReason =
                skips.stream().collect(Collectors.groupingBy(Skip::reason, LinkedHashMap::new, Collectors.toList()));
        String reasons = byReason.entrySet().stream()
                .sorted(Comparator.comparingInt((Map.Entry<String, List<Skip>> e) -> -sum(e.getValue()))
                        .thenComparing(Map.Entry::getKey))
                .map(e -> sum(e.getValue()) + " × " + e.getKey() + " (" + classes(e.getValue()) + ")")
                .collect(Collectors.joining("; "));
        int total = count();
        return "skipped " + total + (total == 1 ? " test: " : " tests: ") + reasons;
    }

    private static int sum(List<Skip> skips) {
        return skips.stream().mapToInt(Skip::count).sum();
    }

    private static String classes(List<Skip> skips) {
        List<String> names =
                new ArrayList<>(skips.stream().map(Skip::className).collect(Collectors.toCollection(TreeSet::new)));
        return names.size() <= NAMED_CLASSES
                ? String.join(", ", names)
                : String.join(", ", names.subList(0, NAMED_CLASSES)) + " and " + (names.size() - NAMED_CLASSES)
                        + " more";
    }

    public synchronized void save(Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.write(
                    file,
                    skips.stream()
                            .map(s -> s.count() + "\t" + s.className() + "\t" + s.reason())
                            .toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Adds what {@link #save} wrote. */
    public synchronized void load(Path file) {
        try {
            for (String line : Files.readAllLines(file)) {
                String[] f = line.split("\t", 3);
                if (f.length == 3) {
                    skips.add(new Skip(Integer.parseInt(f[0]), f[1], f[2]));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
