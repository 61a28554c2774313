package io.rulesync.api.bench;

import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.checkpoint.Checkpoint;
import io.rulesync.compiler.cli.CompileCommand;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ManifestEncoder;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.store.Batch;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import picocli.CommandLine;

/**
 * How long a plan takes on a large cluster, against compiling the same cluster from its export: the question a pull
 * request's check asks. A cluster of SERVICES Services (10 endpoints each) and NODES nodes is stored the compiler's way
 * (every event with its payload, a version, a checkpoint, then a few events after it), the api runs in this process on
 * a database of its own, and plans are sent over real HTTP.
 *
 * <p>Usage: {@code bench/plan [SERVICES [NODES]]} (default 10000 100). Needs PostgreSQL on 127.0.0.1:5432.
 */
public final class PlanBenchmark {
    private static final String C = "bench";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private PlanBenchmark() {}

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int nodes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        Path dir = Files.createTempDirectory("plan-bench");
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            ClusterState state = SyntheticCluster.build(services, 10);
            for (int n = 3; n < nodes; n++) {
                state = state.withNode(SyntheticCluster.node(n));
            }
            long t0 = System.nanoTime();
            Stored stored = store(store, state);
            System.out.printf(
                    "stored %,d Services, %,d slices, %d nodes: %,d events, a checkpoint, %d events after it (%.1f s)%n",
                    state.services().size(),
                    state.endpointSlices().size(),
                    nodes,
                    stored.events(),
                    stored.after(),
                    secs(t0));
            Path export = dir.resolve("export.yaml");
            writeExport(export, state);
            System.out.printf("export: %.1f MB%n", Files.size(export) / 1e6);

            // The alternative: rulesync compile of the whole export, for one node (its best case: one node).
            for (int i = 0; i < 3; i++) {
                long c = System.nanoTime();
                int exit = new CommandLine(new CompileCommand())
                        .execute(
                                "-f",
                                export.toString(),
                                "--node",
                                "node-0",
                                "-o",
                                dir.resolve("rules.txt").toString());
                System.out.printf("compile -f export --node node-0, run %d: %.2f s (exit %d)%n", i + 1, secs(c), exit);
            }

            try (TestApi api = TestApi.on(db.url(), db.user(), db.password())) {
                String newService = yaml(SyntheticCluster.service(services + 1));
                String endpoint = yaml(SyntheticCluster.slice(5, 10, 7));
                time(api, "plan, one new Service, first (folds checkpoint + events, compiles)", newService, 1);
                time(api, "plan, one new Service, kept base", newService, 5);
                time(api, "plan, one endpoint moved, kept base", endpoint, 5);
                commitMore(store, stored);
                time(api, "plan after 10 more stored events (catches up)", endpoint, 1);
                time(api, "plan of the whole export (every object unchanged)", Files.readString(export), 2);
                Runtime rt = Runtime.getRuntime();
                System.gc();
                System.out.printf(
                        "heap used after (api with one kept base): %d MB%n",
                        (rt.totalMemory() - rt.freeMemory()) >> 20);
            }
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            }
        }
    }

    private record Stored(ClusterHead head, long events, long after, long offset) {}

    /** Version 1 of every object, its checkpoint, then version 2: ten slices changed after the checkpoint. */
    private static Stored store(CompilerStores store, ClusterState state) throws Exception {
        Instant at = Instant.parse("2026-12-01T00:00:00Z");
        List<ClusterEvent> events = new ArrayList<>();
        state.nodes().forEach(n -> events.add(new ObjectUpserted(C, n, "1", at)));
        state.services().forEach(s -> events.add(new ObjectUpserted(C, s, "1", at)));
        state.endpointSlices().forEach(s -> events.add(new ObjectUpserted(C, s, "1", at)));
        ClusterHead.Step s1 = ClusterHead.empty(C).apply(events);
        commit(store, s1, events, -1);
        long last = store.events().lastEventId(C);
        store.batches()
                .writeCheckpoint(
                        new Batch.CheckpointRow(C, last, 1, state.objectCount(), Checkpoint.write(s1.next(), at), at));
        List<ClusterEvent> more = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            more.add(new ObjectUpserted(C, SyntheticCluster.slice(i * 100, 10, 1), "2", at));
        }
        ClusterHead.Step s2 = s1.next().apply(more);
        commit(store, s2, more, events.size());
        return new Stored(s2.next(), events.size() + more.size(), more.size(), events.size() + more.size());
    }

    private static void commitMore(CompilerStores store, Stored stored) throws Exception {
        List<ClusterEvent> more = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            more.add(new ObjectUpserted(C, SyntheticCluster.slice(i * 100 + 1, 10, 2), "3", Instant.now()));
        }
        commit(store, stored.head().apply(more), more, stored.offset());
    }

    private static void commit(CompilerStores store, ClusterHead.Step step, List<ClusterEvent> events, long expected)
            throws Exception {
        List<Batch.EventRow> rows = new ArrayList<>(events.size());
        long offset = Math.max(expected, 0);
        for (ClusterEvent e : events) {
            ObjectRef ref = ObjectRef.of(((ObjectUpserted) e).object());
            rows.add(new Batch.EventRow(
                    C,
                    offset++,
                    "upsert",
                    ref.kind().apiName(),
                    ref.key(),
                    "1",
                    e.observedAt(),
                    EventCodec.encode(e),
                    step.next().version()));
        }
        store.batches()
                .commit(new Batch(
                        "bench",
                        "events-" + C,
                        0,
                        expected,
                        offset,
                        rows,
                        List.of(),
                        List.of(new Batch.VersionRow(
                                C,
                                step.next().version(),
                                Instant.now(),
                                "{\"bench\":true}",
                                "{}",
                                step.diff(),
                                step.next().lineage())),
                        List.of(),
                        List.of()));
    }

    private static void time(TestApi api, String what, String body, int runs) throws Exception {
        double[] s = new double[runs];
        String summary = "";
        for (int i = 0; i < runs; i++) {
            long t = System.nanoTime();
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(api.baseUrl() + "/api/v1/clusters/" + C + "/plan"))
                            .header("Authorization", "Bearer " + TestApi.VIEWER.token())
                            .header("Content-Type", "application/yaml")
                            .timeout(Duration.ofMinutes(5))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            s[i] = secs(t);
            if (r.statusCode() != 200) {
                throw new IllegalStateException(what + ": " + r.statusCode() + " " + r.body());
            }
            summary = r.body().length() + " bytes of answer";
        }
        Arrays.sort(s);
        System.out.printf(
                "%-70s median %.3f s (min %.3f, max %.3f, %d runs; %s)%n",
                what, s[runs / 2], s[0], s[runs - 1], runs, summary);
    }

    private static String yaml(ClusterObject o) {
        return new Dump(DumpSettings.builder().build()).dumpToString(ManifestEncoder.encode(o));
    }

    private static void writeExport(Path file, ClusterState state) throws Exception {
        Dump dump = new Dump(DumpSettings.builder().build());
        try (Writer w = Files.newBufferedWriter(file)) {
            List<ClusterObject> all = new ArrayList<>(state.nodes());
            all.addAll(state.services());
            all.addAll(state.endpointSlices());
            for (ClusterObject o : all) {
                w.write("---\n");
                w.write(dump.dumpToString(ManifestEncoder.encode(o)));
            }
        }
    }

    private static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }
}
