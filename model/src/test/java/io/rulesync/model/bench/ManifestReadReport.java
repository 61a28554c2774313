package io.rulesync.model.bench;

import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * How long reading one manifest file takes against its size: a Service whose one
 * annotation makes the file a single line of N bytes (YAML, and JSON), against a control of the same
 * size in lines of 100 bytes, and a {@code kind: List} of small Services of that size. "before" reads the way {@code ManifestReader} did before its limits (snakeyaml-engine's
 * {@code loadAllFromReader} with its default 1,024-character buffer); "after" is {@link ManifestReader}
 * (its file limit raised to fit, so that the whole file is parsed; the object limit then refuses
 * the long-line Service, after the parse that is being timed).
 *
 * <p>Usage: {@code bench/manifest-read [before|after|both] [MB ...]} (default: both 1 5 10). Each
 * figure is the median of three reads in one JVM, after warm-up reads of 1 MB.
 */
public final class ManifestReadReport {
    private ManifestReadReport() {}

    public static void main(String[] args) throws Exception {
        String which = args.length > 0 ? args[0] : "both";
        List<Integer> sizes = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            sizes.add(Integer.parseInt(args[i]));
        }
        if (sizes.isEmpty()) {
            sizes = List.of(1, 5, 10);
        }
        Path dir = Files.createTempDirectory("manifest-read");
        try {
            // Warm-up: both readers on both kinds of file, so that the first figures are not the JIT's.
            for (Path warm : List.of(
                    write(dir, "warm-single.yaml", singleLine(1_000_000)),
                    write(dir, "warm-multi.yaml", multiLine(1_000_000)))) {
                for (int i = 0; i < 3; i++) {
                    read("before", warm);
                    read("after", warm);
                }
            }
            System.out.printf(Locale.ROOT, "%-8s %-16s %9s %10s%n", "reader", "file", "size", "median s");
            for (int mb : sizes) {
                Path single = write(dir, "single-" + mb + ".yaml", singleLine(mb * 1_000_000));
                Path json = write(dir, "json-" + mb + ".json", json(mb * 1_000_000));
                Path multi = write(dir, "multi-" + mb + ".yaml", multiLine(mb * 1_000_000));
                Path list = write(dir, "list-" + mb + ".yaml", list(mb * 1_000_000));
                for (String mode : which.equals("both") ? List.of("before", "after") : List.of(which)) {
                    for (Path f : List.of(single, json, multi, list)) {
                        double[] t = new double[3];
                        for (int i = 0; i < t.length; i++) {
                            t[i] = read(mode, f);
                        }
                        java.util.Arrays.sort(t);
                        String name = f.getFileName().toString();
                        System.out.printf(
                                Locale.ROOT,
                                "%-8s %-16s %6d MB %10.2f%n",
                                mode,
                                name.startsWith("single")
                                        ? "YAML long line"
                                        : name.startsWith("json")
                                                ? "JSON one line"
                                                : name.startsWith("list") ? "List of Services" : "YAML 100 B lines",
                                mb,
                                t[1]);
                    }
                }
            }
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    /** Seconds to read {@code file}; problems (the long line's object is refused) do not matter here. */
    private static double read(String mode, Path file) throws Exception {
        long t0 = System.nanoTime();
        if (mode.equals("before")) {
            LoadSettings settings = LoadSettings.builder()
                    .setLabel(file.toString())
                    .setAllowDuplicateKeys(false)
                    .setAllowRecursiveKeys(false)
                    .setMaxAliasesForCollections(64)
                    .setCodePointLimit(64 * 1024 * 1024)
                    .build();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                for (Object ignored : new Load(settings).loadAllFromReader(r)) {
                    // parse only
                }
            }
        } else {
            try {
                ManifestReader.read(List.of(file), ManifestReader.MAX_FILE_LIMIT);
            } catch (ManifestException e) {
                // expected for the long line: its annotation makes the object larger than 3 MiB
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    static String singleLine(int bytes) {
        String head = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n    big: ";
        String tail = "\nspec: {clusterIP: 10.96.0.80, ports: [{port: 80}]}\n";
        return head + "a".repeat(Math.max(0, bytes - head.length() - tail.length())) + tail;
    }

    static String json(int bytes) {
        String head =
                "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"annotations\":{\"big\":\"";
        String tail = "\"}},\"spec\":{\"clusterIP\":\"10.96.0.80\",\"ports\":[{\"port\":80}]}}\n";
        return head + "a".repeat(Math.max(0, bytes - head.length() - tail.length())) + tail;
    }

    static String multiLine(int bytes) {
        StringBuilder sb = new StringBuilder("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n");
        String tail = "spec: {clusterIP: 10.96.0.80, ports: [{port: 80}]}\n";
        for (int i = 0; sb.length() + tail.length() < bytes; i++) {
            String key = "    k" + i + ": ";
            sb.append(key).append("a".repeat(Math.max(1, 99 - key.length()))).append('\n');
        }
        return sb.append(tail).toString();
    }

    /** A {@code kind: List} of small Services, one per line: the many-objects file a folder may hold. */
    static String list(int bytes) {
        StringBuilder sb = new StringBuilder("apiVersion: v1\nkind: List\nitems:\n");
        for (int i = 0; sb.length() < bytes - 200; i++) {
            sb.append("- {apiVersion: v1, kind: Service, metadata: {name: svc-")
                    .append(i)
                    .append(", namespace: shop}, ")
                    .append("spec: {clusterIP: 10.96.")
                    .append(i / 250 % 250)
                    .append('.')
                    .append(i % 250 + 1)
                    .append(", ports: [{name: http, port: 80, targetPort: 8080}]}}\n");
        }
        return sb.toString();
    }

    private static Path write(Path dir, String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }
}
