package io.rulesync.model.bench;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestDocument;
import io.rulesync.model.manifest.Problem;
import java.io.BufferedWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.constructor.StandardConstructor;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * A whole cluster's export in one file, as {@code kubectl get svc,endpointslices,nodes -A -o yaml} writes it (items
 * before kind, block style, every field kubectl prints), read against its size. "whole" parses the file the way
 * manifest files were read before they were streamed (the whole text, one node tree for the document, then its items);
 * "streamed" is {@link ManifestReader#readEach}, each object decoded to its typed form as it comes and kept, as
 * {@code rulesync compile} and the watcher do. Each line says the time and the heap the kept objects hold after a full
 * collection; a read that does not fit in the heap ({@code -Xmx}) says so.
 *
 * <p>Usage: {@code bench/manifest-export [SERVICES ...]} (default 10000 50000 120000); each Service comes with its
 * EndpointSlice of two endpoints, and the file with 100 Nodes.
 */
public final class ExportReadReport {
    private ExportReadReport() {}

    public static void main(String[] args) throws Exception {
        List<Integer> counts = new ArrayList<>();
        for (String a : args) {
            counts.add(Integer.parseInt(a));
        }
        if (counts.isEmpty()) {
            counts = List.of(10_000, 50_000, 120_000);
        }
        System.out.printf(
                Locale.ROOT,
                "heap (-Xmx): %d MB, JDK %s%n",
                Runtime.getRuntime().maxMemory() >> 20,
                Runtime.version());
        Path dir = Files.createTempDirectory("manifest-export");
        try {
            Path warm = export(dir, 2_000);
            for (int i = 0; i < 3; i++) {
                read("streamed", warm);
                read("whole", warm);
            }
            Files.delete(warm);
            System.out.printf(
                    Locale.ROOT,
                    "%-9s %9s %10s %9s %8s %11s%n",
                    "reader",
                    "Services",
                    "file",
                    "objects",
                    "s",
                    "kept heap");
            for (int n : counts) {
                Path file = export(dir, n);
                for (String mode : List.of("streamed", "whole")) {
                    System.out.println(read(mode, file).line(mode, n, Files.size(file)));
                }
                Files.delete(file);
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    private record Result(int objects, double seconds, long keptBytes, String failure) {
        String line(String mode, int services, long fileBytes) {
            String head = String.format(Locale.ROOT, "%-9s %9d %7.1f MB", mode, services, fileBytes / 1e6);
            return failure != null
                    ? head + "   " + failure
                    : head + String.format(Locale.ROOT, " %9d %8.2f %8d MB", objects, seconds, keptBytes >> 20);
        }
    }

    private static Result read(String mode, Path file) throws Exception {
        System.gc();
        long before = usedHeap();
        List<ClusterObject> kept = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        long t0 = System.nanoTime();
        try {
            if (mode.equals("streamed")) {
                ManifestReader.readEach(List.of(file), ManifestReader.MAX_FILE_LIMIT, doc -> keep(doc, kept, problems));
            } else {
                whole(file, kept, problems);
            }
        } catch (OutOfMemoryError e) {
            kept.clear();
            return new Result(0, 0, 0, "out of memory");
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the export should be valid: " + problems.get(0));
        }
        System.gc();
        long keptBytes = usedHeap() - before;
        int objects = kept.size();
        kept.clear();
        return new Result(objects, seconds, keptBytes, null);
    }

    /** As files were read before they were streamed: the whole text, the whole document's node tree, then its items. */
    private static void whole(Path file, List<ClusterObject> kept, List<Problem> problems) throws Exception {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        LoadSettings settings = LoadSettings.builder()
                .setLabel(file.toString())
                .setAllowDuplicateKeys(false)
                .setAllowRecursiveKeys(false)
                .setMaxAliasesForCollections(64)
                .setCodePointLimit(Integer.MAX_VALUE)
                .setBufferSize(text.length() + 1)
                .build();
        StandardConstructor constructor = new StandardConstructor(settings);
        for (Node node : new Compose(settings).composeAllFromString(text)) {
            if (constructor.constructSingleDocument(Optional.of(node)) instanceof Map<?, ?> doc
                    && doc.get("items") instanceof List<?> items) {
                for (Object item : items) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> obj = (Map<String, Object>) item;
                    keep(new ManifestDocument(file.toString(), obj), kept, problems);
                }
            }
        }
    }

    private static void keep(ManifestDocument doc, List<ClusterObject> kept, List<Problem> problems) {
        ManifestDecoder.Decoded d = ManifestDecoder.decode(doc);
        if (d instanceof ManifestDecoder.Decoded.Accepted a) {
            kept.add(a.object());
        } else if (d instanceof ManifestDecoder.Decoded.Rejected r) {
            problems.addAll(r.problems());
        }
    }

    private static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** {@code services} Services in 100 namespaces, an EndpointSlice of two endpoints each, and 100 Nodes, as kubectl writes them. */
    static Path export(Path dir, int services) throws Exception {
        Path file = dir.resolve("export-" + services + ".yaml");
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write("apiVersion: v1\nitems:\n");
            for (int i = 0; i < services; i++) {
                String ip = "10." + (96 + i / 65_536) + "." + (i / 256 % 256) + "." + (i % 256);
                w.write("""
                        - apiVersion: v1
                          kind: Service
                          metadata:
                            creationTimestamp: "2026-11-02T09:14:07Z"
                            labels:
                              app: svc-%1$d
                            name: svc-%1$d
                            namespace: ns-%2$d
                            resourceVersion: "%3$d"
                            uid: 6f0c8a52-1b2d-4e5f-9a7b-%1$012d
                          spec:
                            clusterIP: %4$s
                            clusterIPs:
                            - %4$s
                            internalTrafficPolicy: Cluster
                            ipFamilies:
                            - IPv4
                            ipFamilyPolicy: SingleStack
                            ports:
                            - name: http
                              port: 80
                              protocol: TCP
                              targetPort: 8080
                            selector:
                              app: svc-%1$d
                            sessionAffinity: None
                            type: ClusterIP
                          status:
                            loadBalancer: {}
                        """.formatted(i, i % 100, 1_000_000 + i, ip));
            }
            for (int i = 0; i < services; i++) {
                w.write("""
                        - addressType: IPv4
                          apiVersion: discovery.k8s.io/v1
                          endpoints:
                          - addresses:
                            - 10.244.%3$d.%4$d
                            conditions:
                              ready: true
                              serving: true
                              terminating: false
                            nodeName: node-%5$d
                            targetRef:
                              kind: Pod
                              name: svc-%1$d-7d9f8b6c4-abcde
                              namespace: ns-%2$d
                          - addresses:
                            - 10.245.%3$d.%4$d
                            conditions:
                              ready: true
                              serving: true
                              terminating: false
                            nodeName: node-%6$d
                            targetRef:
                              kind: Pod
                              name: svc-%1$d-7d9f8b6c4-fghij
                              namespace: ns-%2$d
                          kind: EndpointSlice
                          metadata:
                            generateName: svc-%1$d-
                            labels:
                              endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io
                              kubernetes.io/service-name: svc-%1$d
                            name: svc-%1$d-x7k2p
                            namespace: ns-%2$d
                            resourceVersion: "%7$d"
                          ports:
                          - name: http
                            port: 8080
                            protocol: TCP
                        """.formatted(i, i % 100, i / 250 % 250, i % 250 + 1, i % 100, (i + 1) % 100, 2_000_000 + i));
            }
            for (int i = 0; i < 100; i++) {
                w.write("""
                        - apiVersion: v1
                          kind: Node
                          metadata:
                            labels:
                              kubernetes.io/hostname: node-%1$d
                              topology.kubernetes.io/zone: zone-%2$d
                            name: node-%1$d
                          spec:
                            podCIDR: 10.244.%1$d.0/24
                          status:
                            addresses:
                            - address: 192.168.0.%3$d
                              type: InternalIP
                            - address: node-%1$d
                              type: Hostname
                        """.formatted(i, i % 3, i + 1));
            }
            w.write("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
        }
        return file;
    }
}
