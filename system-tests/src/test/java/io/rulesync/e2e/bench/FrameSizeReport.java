package io.rulesync.e2e.bench;

import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.stream.ServerFrame;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code bench/frame-size [SERVICES ENDPOINTS]}: what one endpoint change's frame weighs on a node stream, plain and
 * deflated, and what deflate costs: the api once per group of nodes, a node once per frame. The cluster is synthetic
 * (one node, every Service with its own EndpointSlice); each change replaces the endpoints of one Service.
 */
public final class FrameSizeReport {
    private FrameSizeReport() {}

    public static void main(String[] args) {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        Instant t = Instant.parse("2026-12-04T12:00:00Z");
        var state = SyntheticCluster.build(services, endpoints);
        List<ClusterEvent> first = new ArrayList<>();
        state.nodes().forEach(n -> first.add(new ClusterEvent.ObjectUpserted("c", n, "1", t)));
        state.services().forEach(s -> first.add(new ClusterEvent.ObjectUpserted("c", s, "1", t)));
        state.endpointSlices().forEach(s -> first.add(new ClusterEvent.ObjectUpserted("c", s, "1", t)));
        ClusterHead head = ClusterHead.empty("c").apply(first).next();
        int changes = 50;
        long[] plain = new long[changes];
        long[] deflated = new long[changes];
        byte[] ndjson = null;
        for (int i = 0; i < changes; i++) {
            ClusterHead.Step step = head.apply(List.of(new ClusterEvent.ObjectUpserted(
                    "c", SyntheticCluster.slice(i * 37 % services, endpoints, 100 + i), "1", t)));
            head = step.next();
            ndjson = (new RulesDelta("c", 1, 2, t, step.diff()).toJson() + "\n").getBytes(StandardCharsets.UTF_8);
            plain[i] = ServerFrame.deltas(2, 1, 2, Lineage.UNKNOWN, Lineage.UNKNOWN, ndjson, false).length;
            deflated[i] = ServerFrame.deltas(2, 1, 2, Lineage.UNKNOWN, Lineage.UNKNOWN, ndjson, true).length;
        }
        Arrays.sort(plain);
        Arrays.sort(deflated);
        System.out.printf(
                "one endpoint change at %d Services x %d endpoints, %d changes: frame p50 %d bytes plain, %d deflated (max %d, %d)%n",
                services,
                endpoints,
                changes,
                plain[changes / 2],
                deflated[changes / 2],
                plain[changes - 1],
                deflated[changes - 1]);
        byte[] frame = ServerFrame.deltas(2, 1, 2, Lineage.UNKNOWN, Lineage.UNKNOWN, ndjson, true);
        ServerFrame.Deltas d = (ServerFrame.Deltas) ServerFrame.read(frame);
        long sink = 0;
        for (int round = 0; round < 2; round++) { // the first round warms the JIT up
            long t0 = System.nanoTime();
            for (int i = 0; i < 100_000; i++) {
                sink += ServerFrame.deltas(2, 1, 2, Lineage.UNKNOWN, Lineage.UNKNOWN, ndjson, true).length;
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < 100_000; i++) {
                sink += d.ndjson().length;
            }
            long t2 = System.nanoTime();
            if (round == 1) {
                System.out.printf(
                        "deflating the frame (the api, once per group of nodes): %.1f µs; inflating it (a node, once per frame): %.1f µs%n",
                        (t1 - t0) / 1e3 / 100_000, (t2 - t1) / 1e3 / 100_000);
            }
        }
        if (sink == 42) {
            System.out.println(sink);
        }
    }
}
