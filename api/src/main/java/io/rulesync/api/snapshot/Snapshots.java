package io.rulesync.api.snapshot;

import io.rulesync.api.params.DnsSubdomain;
import io.rulesync.api.params.VersionRef;
import io.rulesync.api.rollout.Release;
import io.rulesync.client.SnapshotTag;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.store.VersionHistory;
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
        /** The node's snapshot of version {@code seq} of {@code lineage}, as gzip ({@link SnapshotBodies}). */
        record Found(long seq, String lineage, byte[] gzip) implements Outcome {}

        /** The caller already holds version {@code seq} of {@code lineage}, the one it asked for (304). */
        record NotModified(long seq, String lineage) implements Outcome {}

        /** The cluster or node does not exist (404): {@code parameter} says which. */
        record NotFound(String parameter, String detail) implements Outcome {}

        /** The cluster has no version {@code seq}: never had (404), or retention removed it (410). */
        record NoVersion(long seq, long oldest, long head) implements Outcome {}
    }

    private final VersionHistory store;
    private final RecentVersions recent;
    private final SnapshotBodies bodies;
    private final Release release;

    public Snapshots(VersionHistory store, RecentVersions recent, SnapshotBodies bodies, Release release) {
        this.store = store;
        this.release = release;
        this.recent = recent;
        this.bodies = bodies;
    }

    /** The entity tag of a snapshot of version {@code seq} ({@link SnapshotTag}). */
    public static String etag(long seq, String lineage) {
        return new SnapshotTag(seq, lineage).header();
    }

    /**
     * @param version     a version number, or {@value VersionRef#LATEST}
     * @param ifNoneMatch the request's {@code If-None-Match} (null: none): an agent that runs the version asked for gets
     *                    {@link Outcome.NotModified}: one row read (the version, for its lineage), no rules, nothing sent
     */
    public Outcome snapshot(String cluster, VersionRef version, DnsSubdomain node, String ifNoneMatch) {
        long seq;
        if (version.latest()) {
            long head = store.head(cluster);
            if (head == 0) {
                return unknownCluster(cluster);
            }
            // Under a staged rollout, the newest version released to the node's wave.
            seq = release.released(cluster, node.name(), head);
        } else {
            seq = version.number();
        }
        Optional<VersionHistory.VersionInfo> info = store.version(cluster, seq);
        String lineage = info.map(VersionHistory.VersionInfo::lineage).orElse(null);
        if (ifNoneMatch != null
                && lineage != null
                && java.util.Arrays.stream(ifNoneMatch.split(","))
                        .map(String::strip)
                        .anyMatch(etag(seq, lineage)::equals)) {
            return new Outcome.NotModified(seq, lineage);
        }
        long s = seq;
        // The rules are read (or taken from the recent versions) only when the version's bodies are not compressed yet.
        Optional<SnapshotBodies.Version> bodiesOf = info.isEmpty()
                ? Optional.empty()
                : bodies.version(
                        cluster,
                        seq,
                        lineage,
                        () -> recent.get(
                                cluster,
                                s,
                                lineage,
                                () -> Optional.of(new RecentVersions.StoredVersion(
                                        info.get().createdAt(), store.rules(cluster, s)))));
        if (bodiesOf.isEmpty()) {
            long head = store.head(cluster);
            return head == 0 ? unknownCluster(cluster) : new Outcome.NoVersion(seq, store.oldest(cluster), head);
        }
        byte[] gzip = bodiesOf.get().gzip(node.name());
        if (gzip == null) {
            return new Outcome.NotFound(
                    "node",
                    "node: '" + node + "' is not a node of cluster '" + printable(cluster) + "' at version " + seq);
        }
        return new Outcome.Found(seq, lineage, gzip);
    }

    private static Outcome unknownCluster(String cluster) {
        return new Outcome.NotFound(
                "cluster", "cluster: '" + printable(cluster) + "' is not known (it has no versions)");
    }

    private static String printable(String s) {
        return s == null ? "" : KubernetesNames.printable(s);
    }
}
