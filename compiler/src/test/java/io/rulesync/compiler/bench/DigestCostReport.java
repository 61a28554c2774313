package io.rulesync.compiler.bench;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;

/**
 * What anti-entropy costs at scale (results: BENCHMARKS.md): the compiler's check of one state digest
 * against a cluster of SERVICES Services x ENDPOINTS endpoints (it fingerprints every object it
 * holds), the digest's size on the wire, and, for comparison, the republish a digest saves (the
 * wire size of every object). Usage: {@code bench/digest-cost [SERVICES ENDPOINTS]}.
 */
public final class DigestCostReport {
    private DigestCostReport() {}

    public static void main(String[] args) {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        ClusterState state = SyntheticCluster.build(services, endpoints);
        StateDigest digest = new StateDigest(
                "bench",
                Map.of(
                        ObjectKind.SERVICE, StateDigest.of(state.services()),
                        ObjectKind.ENDPOINT_SLICE, StateDigest.of(state.endpointSlices()),
                        ObjectKind.NODE, StateDigest.of(state.nodes())),
                Fingerprint.of(ClusterSettings.DEFAULT),
                Instant.now());

        int runs = 15;
        long[] nanos = new long[runs];
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            if (!digest.differences(state, ClusterSettings.DEFAULT).isEmpty()) {
                throw new IllegalStateException("a digest of the same state must agree");
            }
            nanos[i] = System.nanoTime() - t0;
        }
        long[] warm = Arrays.copyOfRange(nanos, 5, runs);
        Arrays.sort(warm);
        long wire = 0;
        for (var s : state.services()) {
            wire += EventCodec.encode(
                            new io.rulesync.model.event.ClusterEvent.ObjectUpserted("bench", s, "1", Instant.now()))
                    .length();
        }
        for (var s : state.endpointSlices()) {
            wire += EventCodec.encode(
                            new io.rulesync.model.event.ClusterEvent.ObjectUpserted("bench", s, "1", Instant.now()))
                    .length();
        }
        System.out.printf(
                "cluster: %d Services, %d EndpointSlices, %d nodes%n",
                state.services().size(),
                state.endpointSlices().size(),
                state.nodes().size());
        System.out.printf(
                "compiler's check of one digest: first %.1f ms, then median %.1f ms, max %.1f ms (%d runs after 5 warm-up)%n",
                nanos[0] / 1e6, warm[warm.length / 2] / 1e6, warm[warm.length - 1] / 1e6, warm.length);
        System.out.printf(
                "digest on the wire: %d bytes; the republish it saves: %d events, %.1f MB%n",
                EventCodec.encode(digest).length(),
                state.services().size() + state.endpointSlices().size(),
                wire / 1e6);
    }
}
