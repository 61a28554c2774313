package io.rulesync.api.snapshot;

import io.rulesync.store.VersionHistory;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesSnapshot;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What an agent loads to start from: one node's rules at one stored version. Answers are data: the
 * snapshot, or why there is none, naming the request parameter at fault.
 */
public final class Snapshots {
    public static final String LATEST = "latest";
    private static final Pattern VERSION = Pattern.compile("[1-9][0-9]{0,17}");

    /** The answer to one snapshot request. */
    public sealed interface Outcome {
        record Found(RulesSnapshot snapshot) implements Outcome {
        }

        /** The request was malformed (400): {@code parameter} is the one at fault. */
        record BadRequest(String parameter, String detail) implements Outcome {
        }

        /** The cluster, version or node does not exist (404): {@code parameter} says which. */
        record NotFound(String parameter, String detail) implements Outcome {
        }
    }

    private final VersionHistory store;
    private final RecentVersions recent;

    public Snapshots(VersionHistory store, RecentVersions recent) {
        this.store = store;
        this.recent = recent;
    }

    /** @param version a version number, or {@value #LATEST} */
    public Outcome snapshot(String cluster, String version, String node) {
        if (version == null || !(version.equals(LATEST) || VERSION.matcher(version).matches())) {
            return new Outcome.BadRequest("version", "version: '" + printable(version)
                    + "' is not a version number (1, 2, ...) or '" + LATEST + "'");
        }
        if (node == null || node.isEmpty()) {
            return new Outcome.BadRequest("node", "node: the query parameter ?node=NAME is required");
        }
        String nodeProblem = KubernetesNames.checkSubdomain(node);
        if (nodeProblem != null) {
            return new Outcome.BadRequest("node", "node: " + nodeProblem);
        }

        long seq;
        if (version.equals(LATEST)) {
            seq = store.head(cluster);
            if (seq == 0) {
                return unknownCluster(cluster);
            }
        } else {
            seq = Long.parseLong(version);
        }
        long s = seq;
        Optional<RecentVersions.StoredVersion> stored = recent.get(cluster, seq,
                () -> store.version(cluster, s).map(info -> new RecentVersions.StoredVersion(info.createdAt(), store.rules(cluster, s))));
        if (stored.isEmpty()) {
            long head = store.head(cluster);
            return head == 0 ? unknownCluster(cluster) : new Outcome.NotFound("version", "version: cluster '"
                    + printable(cluster) + "' has no version " + seq + " (its versions are 1-" + head + ")");
        }
        ClusterRules rules = stored.get().rules().forNode(node);
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
