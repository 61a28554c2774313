package io.rulesync.api.snapshot;

import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.rulesync.store.VersionHistory;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesSnapshot;
import java.util.Optional;

/**
 * What an agent loads to start from: one node's rules at one stored version. Answers are data: the
 * snapshot, or why there is none, naming the request parameter at fault.
 */
public final class Snapshots {

    /**
     * The answer to one snapshot request. Its parameters' syntax is checked where they are bound
     * ({@link VersionRef}, {@link DnsSubdomain}): what is left is whether they exist.
     */
    public sealed interface Outcome {
        record Found(RulesSnapshot snapshot) implements Outcome {
        }

        /** The cluster or node does not exist (404): {@code parameter} says which. */
        record NotFound(String parameter, String detail) implements Outcome {
        }

        /** The cluster has no version {@code seq}: never had (404), or retention removed it (410). */
        record NoVersion(long seq, long oldest, long head) implements Outcome {
        }
    }

    private final VersionHistory store;
    private final RecentVersions recent;

    public Snapshots(VersionHistory store, RecentVersions recent) {
        this.store = store;
        this.recent = recent;
    }

    /** @param version a version number, or {@value VersionRef#LATEST} */
    public Outcome snapshot(String cluster, VersionRef version, DnsSubdomain node) {
        long seq;
        if (version.latest()) {
            seq = store.head(cluster);
            if (seq == 0) {
                return unknownCluster(cluster);
            }
        } else {
            seq = version.number();
        }
        long s = seq;
        Optional<RecentVersions.StoredVersion> stored = recent.get(cluster, seq,
                () -> store.version(cluster, s).map(info -> new RecentVersions.StoredVersion(info.createdAt(), store.rules(cluster, s))));
        if (stored.isEmpty()) {
            long head = store.head(cluster);
            return head == 0 ? unknownCluster(cluster) : new Outcome.NoVersion(seq, store.oldest(cluster), head);
        }
        ClusterRules rules = stored.get().rules().forNode(node.name());
        if (rules.nodes().isEmpty()) {
            return new Outcome.NotFound("node", "node: '" + node + "' is not a node of cluster '" + printable(cluster)
                    + "' at version " + seq);
        }
        return new Outcome.Found(new RulesSnapshot(cluster, seq, stored.get().createdAt(), rules));
    }

    private static Outcome unknownCluster(String cluster) {
        return new Outcome.NotFound("cluster", "cluster: '" + printable(cluster) + "' is not known (it has no versions)");
    }

    private static String printable(String s) {
        return s == null ? "" : KubernetesNames.printable(s);
    }
}
