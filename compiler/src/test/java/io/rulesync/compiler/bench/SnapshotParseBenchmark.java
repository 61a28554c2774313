package io.rulesync.compiler.bench;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.Json;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesSnapshot;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * What an agent pays to read its snapshot (results: BENCHMARKS.md): the snapshot of one node of the
 * pipeline benchmark's cluster (SERVICES Services x ENDPOINTS endpoints over NODES nodes), written
 * with {@link RulesSnapshot#toJson} and read back with {@link RulesSnapshot#fromJson}, and the JSON
 * layer alone read by snakeyaml-engine (the reader before Jackson) and by Jackson; median of ROUNDS
 * after warm-ups. Usage: {@code bench/snapshot-parse [SERVICES ENDPOINTS NODES ROUNDS]}.
 */
public final class SnapshotParseBenchmark {
    private static final int WARM_UP = 3;

    private SnapshotParseBenchmark() {}

    public static void main(String[] args) {
        int services = arg(args, 0, 10_000);
        int endpoints = arg(args, 1, 10);
        int nodes = arg(args, 2, 1_000);
        int rounds = arg(args, 3, 7);
        List<Service> svcs = new ArrayList<>(services);
        List<EndpointSlice> slices = new ArrayList<>(services);
        for (int i = 0; i < services; i++) {
            svcs.add(PipelineBenchmark.service(i));
            slices.add(PipelineBenchmark.slice(i, endpoints, nodes, 0));
        }
        List<Node> nodeList = new ArrayList<>(nodes);
        for (int n = 0; n < nodes; n++) {
            nodeList.add(PipelineBenchmark.node(n));
        }
        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.64.0.0/10")), false, 14, List.of());
        ClusterRules rules = ClusterCompiler.compile(ClusterState.of(svcs, slices, nodeList), settings)
                .rules();
        RulesSnapshot snapshot = new RulesSnapshot("bench", 1, Instant.EPOCH, rules.forNode("node-0"));

        String json = snapshot.toJson();
        double[] writeMs = time(rounds, () -> snapshot.toJson().length());
        double[] readMs = time(
                rounds, () -> RulesSnapshot.fromJson(json).rules().fragments().size());
        // The same reads by what this thread did (CPU time, bytes allocated): wall time on a shared
        // machine also counts waiting for a core, and the first touch of heap the JVM just grew.
        com.sun.management.ThreadMXBean thread = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long allocated = thread.getCurrentThreadAllocatedBytes();
        double[] readCpuMs = time(
                rounds,
                () -> RulesSnapshot.fromJson(json).rules().fragments().size(),
                () -> thread.getCurrentThreadCpuTime());
        double readMb = (thread.getCurrentThreadAllocatedBytes() - allocated) / 1e6 / (rounds + WARM_UP);
        // The JSON layer alone, both ways it has been read: the YAML 1.2 parser into maps (before
        // Jackson) and Jackson's tokens (the rest of fromJson is parsing and hashing the fragments).
        double[] yamlMs = time(
                rounds,
                () -> ((Map<?, ?>) new Load(LoadSettings.builder()
                                        .setAllowDuplicateKeys(false)
                                        .setCodePointLimit(Integer.MAX_VALUE)
                                        .build())
                                .loadFromString(json))
                        .size());
        double[] tokensMs = time(rounds, () -> {
            int n = 0;
            try (JsonParser p = Json.MAPPER.createParser(json)) {
                while (p.nextToken() != null) {
                    n += p.currentToken() == JsonToken.VALUE_STRING
                            ? p.getString().length()
                            : 1;
                }
            }
            return n;
        });
        if (!RulesSnapshot.fromJson(json).equals(snapshot)) {
            throw new IllegalStateException("the snapshot read back differs from the one written");
        }
        System.out.printf(
                "snapshot of node-0: %,d Services x %,d endpoints over %,d nodes; %,d fragments, %.1f MB%n",
                services, endpoints, nodes, snapshot.rules().fragments().size(), json.length() / 1e6);
        System.out.printf(
                "median of %d after %d warm-ups: toJson %.0f ms (min %.0f), fromJson %.0f ms (min %.0f)%n",
                rounds, WARM_UP, writeMs[rounds / 2], writeMs[0], readMs[rounds / 2], readMs[0]);
        System.out.printf(
                "fromJson on its thread: CPU %.0f ms (min %.0f), %.0f MB allocated per read%n",
                readCpuMs[rounds / 2], readCpuMs[0], readMb);
        System.out.printf(
                "the JSON layer alone: snakeyaml-engine into maps %.0f ms (min %.0f), Jackson tokens %.0f ms (min %.0f)%n",
                yamlMs[rounds / 2], yamlMs[0], tokensMs[rounds / 2], tokensMs[0]);
    }

    private static double[] time(int rounds, java.util.function.IntSupplier work) {
        return time(rounds, work, System::nanoTime);
    }

    /** {@code clock} in nanoseconds. */
    private static double[] time(
            int rounds, java.util.function.IntSupplier work, java.util.function.LongSupplier clock) {
        long sink = 0;
        for (int i = 0; i < WARM_UP; i++) {
            sink += work.getAsInt();
        }
        double[] ms = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long t0 = clock.getAsLong();
            sink += work.getAsInt();
            ms[i] = (clock.getAsLong() - t0) / 1e6;
        }
        if (sink == 42) {
            System.out.print("");
        }
        Arrays.sort(ms);
        return ms;
    }

    private static int arg(String[] args, int i, int def) {
        return args.length > i ? Integer.parseInt(args[i]) : def;
    }
}
