package io.rulesync.model.rules;

import io.rulesync.model.event.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * A published change from version {@code base} to {@code target} of one cluster, as it travels on
 * the deltas topic. It carries the changed fragments themselves, per node class; a node applies the
 * fragments whose variant resolves to it ({@link ClusterRules#ruleSet}), so one message serves every
 * node and its size grows with the change, not with the number of nodes.
 */
public record RulesDelta(String cluster, long base, long target, Instant createdAt, RulesDiff diff) {
    public static final int FORMAT = 1;

    public RulesDelta {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(diff, "diff");
        if (target != base + 1) {
            throw new IllegalArgumentException("a delta goes from one version to the next: " + base + " -> " + target);
        }
    }

    /** The delta as one message (see {@link #toJsonParts} for large ones). */
    public String toJson() {
        return toJsonParts(Integer.MAX_VALUE).get(0);
    }

    /**
     * The delta as one or more messages of at most about {@code maxChars} each: Kafka refuses
     * messages above its limit (1 MiB by default), and the first version of a large cluster is
     * large. Fragments are never split; every part carries {@code part} and {@code parts}, the node
     * changes travel in the first. {@link #fromJsonParts} puts them back together.
     */
    public List<String> toJsonParts(int maxChars) {
        List<String> fragments = new ArrayList<>();
        for (RulesDiff.FragmentChange c : diff.fragments()) {
            fragments.add(FragmentJson.fragment(c.key(), c.after()));
        }
        String nodesJson = FragmentJson.nodes(diff.nodes());
        List<List<String>> groups = new ArrayList<>();
        List<String> current = new ArrayList<>();
        long size = nodesJson.length();
        for (String f : fragments) {
            if (!current.isEmpty() && size + f.length() + 256 > maxChars) {
                groups.add(current);
                current = new ArrayList<>();
                size = 0;
            }
            current.add(f);
            size += f.length() + 1;
        }
        groups.add(current);
        List<String> out = new ArrayList<>(groups.size());
        for (int i = 0; i < groups.size(); i++) {
            // Assembled by hand: the fragments are already JSON text.
            out.add("{\"v\":" + FORMAT + ",\"cluster\":" + Json.write(cluster) + ",\"base\":" + base + ",\"target\":" + target
                    + ",\"createdAt\":" + Json.write(createdAt.toString()) + ",\"part\":" + (i + 1) + ",\"parts\":" + groups.size()
                    + ",\"fragments\":[" + String.join(",", groups.get(i)) + "],\"nodes\":" + (i == 0 ? nodesJson : "[]") + "}");
        }
        return out;
    }

    /** Reads a delta sent as several parts (in any order). */
    public static RulesDelta fromJsonParts(List<String> parts) {
        List<RulesDelta> read = new ArrayList<>();
        Map<Integer, RulesDelta> byPart = new TreeMap<>();
        int expected = -1;
        for (String p : parts) {
            Map<?, ?> m = parse(p);
            int part = intOr(m.get("part"), 1);
            expected = intOr(m.get("parts"), 1);
            byPart.put(part, fromMap(m));
        }
        if (byPart.size() != expected) {
            throw new IllegalArgumentException("delta has " + byPart.size() + " of " + expected + " parts");
        }
        read.addAll(byPart.values());
        RulesDelta first = read.get(0);
        List<RulesDiff.FragmentChange> fragments = new ArrayList<>();
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        for (RulesDelta d : read) {
            if (!d.cluster().equals(first.cluster()) || d.target() != first.target()) {
                throw new IllegalArgumentException("parts of different deltas");
            }
            fragments.addAll(d.diff().fragments());
            nodes.addAll(d.diff().nodes());
        }
        return new RulesDelta(first.cluster(), first.base(), first.target(), first.createdAt(), new RulesDiff(fragments, nodes));
    }

    /** Which part of its delta a message is, and of how many: {@code [part, parts]}. */
    public static int[] partOf(String json) {
        Map<?, ?> m = parse(json);
        return new int[] {intOr(m.get("part"), 1), intOr(m.get("parts"), 1)};
    }

    /**
     * Reads a one-part delta. The "before" side of each change is not on the wire (the receiver has it), so
     * the diff read back holds afters only; removals come back with an empty fragment as "before".
     */
    public static RulesDelta fromJson(String json) {
        return fromJsonParts(List.of(json));
    }

    private static Map<?, ?> parse(String json) {
        return (Map<?, ?>) new Load(LoadSettings.builder().setAllowDuplicateKeys(false).setCodePointLimit(Integer.MAX_VALUE).build()).loadFromString(json);
    }

    private static RulesDelta fromMap(Map<?, ?> m) {
        if (!Integer.valueOf(FORMAT).equals(m.get("v"))) {
            throw new IllegalArgumentException("v: delta format " + m.get("v") + " is not supported");
        }
        List<RulesDiff.FragmentChange> fragments = FragmentJson.readFragments((List<?>) m.get("fragments"));
        List<RulesDiff.NodeChange> nodes = FragmentJson.readNodes((List<?>) m.get("nodes"));
        return new RulesDelta((String) m.get("cluster"), number(m.get("base")), number(m.get("target")),
                Instant.parse((String) m.get("createdAt")), new RulesDiff(fragments, nodes));
    }

    private static int intOr(Object o, int def) {
        return o == null ? def : ((Number) o).intValue();
    }

    private static long number(Object o) {
        return ((Number) o).longValue();
    }
}
