package io.rulesync.api.snapshot;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Variant;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.zip.GZIPOutputStream;

/**
 * Snapshots as gzip, made for a start-up storm: a thousand nodes asking for the same version cost one compression of
 * the cluster's rules, not a thousand.
 *
 * <p>A node's snapshot is its cluster's fragments of at most four variants: every node's ({@code *}), its zone's, its
 * own, and its own in its zone ({@link ClusterRules#matches}). So per version the fragments are grouped by variant,
 * each group's JSON compressed once as a gzip member; a node's body is the concatenation of a small head member, its
 * (up to) four groups and a small tail. Concatenated members are one valid gzip stream (RFC 1952), which any gzip
 * reader inflates to exactly {@link RulesSnapshot#toJson}'s fields (the fragments grouped by variant instead of
 * sorted, which the reader does not mind).
 */
public final class SnapshotBodies {
    /** By lineage too: after a restore from a backup, a number may come again for other rules. */
    private record Key(String cluster, long version, String lineage) {}

    /** One version, compressed: the fragments' JSON per variant, and every node's zone. */
    public record Version(
            String cluster,
            long version,
            String lineage,
            Instant createdAt,
            Map<Variant, byte[]> groups,
            SortedMap<String, String> zones,
            long bytes) {
        /** Node {@code node}'s snapshot as gzip; null when it is not a node of the cluster at this version. */
        public byte[] gzip(String node) {
            String zone = zones.get(node);
            if (zone == null) {
                return null;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(SnapshotBodies.gzip(RulesSnapshot.jsonHead(cluster, version, lineage, createdAt)));
            boolean first = true;
            for (Variant v : List.of(
                    Variant.ALL,
                    new Variant(Variant.ANY, zone),
                    new Variant(node, Variant.ANY),
                    new Variant(node, zone))) {
                byte[] group = groups.get(v);
                if (group != null) {
                    if (!first) {
                        out.writeBytes(COMMA);
                    }
                    out.writeBytes(group);
                    first = false;
                }
            }
            out.writeBytes(SnapshotBodies.gzip(RulesSnapshot.jsonTail(Map.of(node, zone))));
            return out.toByteArray();
        }
    }

    private static final byte[] COMMA = gzip(",");

    private final Cache<Key, Version> versions;

    /** @param maxBytes compressed bytes to keep (a version of 10,000 Services is a few MB) */
    public SnapshotBodies(long maxBytes) {
        this.versions = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((Key k, Version c) -> (int) Math.min(Integer.MAX_VALUE, c.bytes()))
                .build();
    }

    /**
     * Version {@code version} of the cluster, compressed once from what {@code load} gives (the whole cluster's rules),
     * called only when it is not held already; empty when {@code load} says the version does not exist.
     */
    public Optional<Version> version(
            String cluster, long version, String lineage, Supplier<Optional<RecentVersions.StoredVersion>> load) {
        return Optional.ofNullable(versions.get(
                new Key(cluster, version, lineage),
                k -> load.get()
                        .map(v -> compress(cluster, version, lineage, v.createdAt(), v.rules()))
                        .orElse(null)));
    }

    private static Version compress(
            String cluster, long version, String lineage, Instant createdAt, ClusterRules rules) {
        Map<Variant, StringBuilder> json = new TreeMap<>();
        for (Map.Entry<FragmentKey, RuleFragment> e : rules.fragments().entrySet()) {
            StringBuilder group = json.computeIfAbsent(e.getKey().variant(), v -> new StringBuilder());
            group.append(group.length() == 0 ? "" : ",").append(RulesSnapshot.fragmentJson(e.getKey(), e.getValue()));
        }
        Map<Variant, byte[]> groups = new HashMap<>();
        long bytes = 0;
        for (Map.Entry<Variant, StringBuilder> e : json.entrySet()) {
            byte[] z = gzip(e.getValue().toString());
            groups.put(e.getKey(), z);
            bytes += z.length + 64;
        }
        return new Version(cluster, version, lineage, createdAt, groups, new TreeMap<>(rules.nodes()), bytes);
    }

    private static byte[] gzip(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, text.length() / 8));
        try (GZIPOutputStream z = new GZIPOutputStream(out, 64 * 1024)) {
            z.write(text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: cannot happen
        }
        return out.toByteArray();
    }
}
