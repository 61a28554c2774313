package io.rulesync.api.testing;

import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.nftables.NftPart;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.store.Batch;
import io.rulesync.store.StaleWriteException;
import io.rulesync.testsupport.cluster.Fixtures;
import java.util.List;

/**
 * Versions written the way the compiler writes them: events folded by {@link ClusterHead}, the
 * resulting diff committed through {@link CompilerStores#commit}.
 */
public final class StoredClusters {
    private StoredClusters() {}

    /**
     * Cluster {@code cluster} with two versions: nodes n1 and n2 and a Service whose
     * internalTrafficPolicy is Local (so n1 and n2 get different rules), then one endpoint changed.
     */
    public static ClusterHead.Step twoVersions(CompilerStores store, String cluster) throws StaleWriteException {
        ClusterHead.Step s1 = ClusterHead.empty(cluster)
                .apply(List.of(
                        Fixtures.upsert(cluster, Fixtures.node("n1", "10.1.0.1")),
                        Fixtures.upsert(cluster, Fixtures.node("n2", "10.1.0.2")),
                        Fixtures.upsert(cluster, localService("web", "10.96.0.10")),
                        Fixtures.upsert(cluster, Fixtures.service("api", "10.96.0.11")),
                        slice(cluster, "web", "n1", "10.244.1.1", "10.244.1.2"),
                        slice(cluster, "api", "n2", "10.244.2.1")));
        commit(store, cluster, -1, 6, s1);
        ClusterHead.Step s2 = s1.next().apply(List.of(slice(cluster, "web", "n1", "10.244.1.1", "10.244.1.3")));
        commit(store, cluster, 6, 7, s2);
        return s2;
    }

    /**
     * One more version after {@code previous} (the step that made the head): {@code web}'s endpoints on n1 become
     * {@code ips}. Stored as one batch from event offset {@code expected} to {@code expected + 1}.
     */
    public static ClusterHead.Step next(
            CompilerStores store, String cluster, ClusterHead.Step previous, long expected, String... ips)
            throws StaleWriteException {
        return next(store, cluster, previous, expected, List.of(slice(cluster, "web", "n1", ips)));
    }

    /** One more version after {@code previous}, made of {@code events}; stored as {@link #next(CompilerStores, String, ClusterHead.Step, long, String...)}. */
    public static ClusterHead.Step next(
            CompilerStores store, String cluster, ClusterHead.Step previous, long expected, List<ClusterEvent> events)
            throws StaleWriteException {
        return next(store, cluster, previous, expected, expected + 1, events);
    }

    /** {@link #next(CompilerStores, String, ClusterHead.Step, long, List)} as a batch from event offset {@code expected} to {@code next}. */
    public static ClusterHead.Step next(
            CompilerStores store,
            String cluster,
            ClusterHead.Step previous,
            long expected,
            long next,
            List<ClusterEvent> events)
            throws StaleWriteException {
        ClusterHead.Step s = previous.next().apply(events);
        commit(store, cluster, expected, next, s);
        return s;
    }

    /**
     * One batch of {@code events} after {@code previous} (null: the cluster's first), stored as the compiler stores it:
     * each event with its real payload, so a reader that folds the stored log (a plan) sees them. Offsets from
     * {@code expected} on, one per event.
     */
    public static ClusterHead.Step logged(
            CompilerStores store, String cluster, ClusterHead.Step previous, long expected, List<ClusterEvent> events)
            throws StaleWriteException {
        ClusterHead.Step s = (previous == null ? ClusterHead.empty(cluster) : previous.next()).apply(events);
        if (!s.newVersion()) {
            throw new IllegalStateException("the fixture's events made no new version of " + cluster);
        }
        List<Batch.EventRow> rows = new java.util.ArrayList<>();
        long offset = Math.max(expected, 0);
        for (ClusterEvent e : events) {
            String type = e instanceof ClusterEvent.ObjectDeleted ? "delete" : "upsert";
            io.rulesync.model.event.ObjectRef ref = e instanceof ClusterEvent.ObjectDeleted d
                    ? d.ref()
                    : io.rulesync.model.event.ObjectRef.of(((ClusterEvent.ObjectUpserted) e).object());
            rows.add(new Batch.EventRow(
                    cluster,
                    offset++,
                    type,
                    ref.kind().apiName(),
                    ref.key(),
                    "1",
                    Fixtures.T,
                    io.rulesync.model.event.EventCodec.encode(e),
                    s.next().version()));
        }
        store.batches()
                .commit(new Batch(
                        "fixture",
                        "events-" + cluster,
                        0,
                        expected,
                        offset,
                        rows,
                        List.of(),
                        List.of(new Batch.VersionRow(
                                cluster,
                                s.next().version(),
                                Fixtures.T.plusSeconds(s.next().version()),
                                "{\"test\":true}",
                                "{}",
                                s.diff(),
                                s.next().lineage())),
                        List.of(),
                        List.of()));
        return s;
    }

    /** Cluster {@code cluster} with one version whose fragments have no nftables part, as compilers before nftables mode wrote them. */
    public static void compiledBeforeNftables(CompilerStores store, String cluster) throws StaleWriteException {
        ClusterHead.Step s = ClusterHead.empty(cluster)
                .apply(List.of(
                        Fixtures.upsert(cluster, Fixtures.node("n1", "10.1.0.1")),
                        Fixtures.upsert(cluster, Fixtures.service("api", "10.96.0.11")),
                        slice(cluster, "api", "n1", "10.244.2.1")));
        ClusterRules old = s.next().published();
        for (var e : s.next().published().fragments().entrySet()) {
            old = old.with(e.getKey(), e.getValue().withNftables(NftPart.NONE));
        }
        store.batches()
                .commit(new Batch(
                        "fixture",
                        "events-" + cluster,
                        0,
                        -1,
                        1,
                        List.of(),
                        List.of(),
                        List.of(new Batch.VersionRow(
                                cluster,
                                1,
                                Fixtures.T,
                                "{\"test\":true}",
                                "{}",
                                RulesDiff.between(ClusterRules.EMPTY, old, null),
                                s.next().lineage())),
                        List.of(),
                        List.of()));
    }

    private static ClusterEvent slice(String cluster, String service, String node, String... ips) {
        return Fixtures.upsert(cluster, Fixtures.slice(service, node, ips));
    }

    private static String localService(String name, String clusterIP) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: shop}\n" + "spec: {clusterIP: " + clusterIP
                + ", internalTrafficPolicy: Local, ports: [{name: http, port: 80}]}\n";
    }

    private static void commit(CompilerStores store, String cluster, long expected, long next, ClusterHead.Step step)
            throws StaleWriteException {
        if (!step.newVersion()) {
            throw new IllegalStateException("the fixture's events made no new version of " + cluster);
        }
        store.batches()
                .commit(new Batch(
                        "fixture",
                        "events-" + cluster,
                        0,
                        expected,
                        next,
                        List.of(new Batch.EventRow(
                                cluster,
                                Math.max(expected, 0),
                                "upsert",
                                "EndpointSlice",
                                "shop/web-1",
                                "1",
                                Fixtures.T,
                                "{}",
                                null)),
                        List.of(),
                        List.of(new Batch.VersionRow(
                                cluster,
                                step.next().version(),
                                Fixtures.T.plusSeconds(step.next().version()),
                                "{\"test\":true}",
                                "{}",
                                step.diff(),
                                step.next().lineage())),
                        List.of(),
                        List.of()));
    }
}
