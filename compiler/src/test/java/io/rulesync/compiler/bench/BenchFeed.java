package io.rulesync.compiler.bench;

import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Feeding one cluster's events straight into a {@link PartitionProcessor} (no Kafka), as the database benchmarks do:
 * the initial load of a {@link PipelineBenchmark}-shaped cluster, and batches of records at consecutive offsets.
 */
final class BenchFeed {
    private BenchFeed() {}

    /** The settings, the nodes, then each Service and its slice, as one cluster's events. */
    static List<String> initialLoad(String cluster, int services, int endpoints, int nodes, Instant at) {
        List<String> initial = new ArrayList<>();
        ClusterSettings settings =
                new ClusterSettings(List.of(IpFamily.IPV4), List.of(Cidr.parse("10.64.0.0/10")), false, 14, List.of());
        initial.add(EventCodec.encode(new ClusterEvent.SettingsChanged(cluster, settings, at)));
        for (int n = 0; n < nodes; n++) {
            initial.add(upsert(cluster, PipelineBenchmark.node(n), at));
        }
        for (int i = 0; i < services; i++) {
            initial.add(upsert(cluster, PipelineBenchmark.service(i), at));
            initial.add(upsert(cluster, PipelineBenchmark.slice(i, endpoints, nodes, 0), at));
        }
        return initial;
    }

    static String upsert(String cluster, ClusterObject o, Instant at) {
        return EventCodec.encode(new ClusterEvent.ObjectUpserted(cluster, o, "1", at));
    }

    /** Processes {@code values} as records of {@code cluster} from {@code offset} on; returns the next offset. */
    static long deliver(PartitionProcessor p, String cluster, long offset, List<String> values) {
        List<PartitionProcessor.Record> records = new ArrayList<>(values.size());
        for (String v : values) {
            records.add(new PartitionProcessor.Record(offset++, cluster, v));
        }
        if (p.process(records) != PartitionProcessor.Outcome.DONE) {
            throw new IllegalStateException("a batch was refused as stale: nothing else writes this database");
        }
        return offset;
    }
}
