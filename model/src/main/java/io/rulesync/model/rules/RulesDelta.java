package io.rulesync.model.rules;

import io.rulesync.model.event.Json;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * A published change from version {@code base} to {@code target} of one cluster, as it travels on
 * the deltas topic. It carries the changed fragments themselves, per node class; a node applies the
 * fragments whose variant resolves to it ({@link ClusterRules#ruleSet}), so one message serves every
 * node and its size grows with the change, not with the number of nodes.
 */
public record RulesDelta(
        String cluster, long base, long target, Instant createdAt, RulesDiff diff, String baseLineage, String lineage) {
    public static final int FORMAT = 1;

    /**
     * @param baseLineage the {@link Lineage} of version {@code base}: a node that runs {@code base} of another lineage
     *                    must not apply this delta
     * @param lineage     the lineage of version {@code target}
     */
    public RulesDelta {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(diff, "diff");
        Objects.requireNonNull(baseLineage, "baseLineage");
        Objects.requireNonNull(lineage, "lineage");
        if (target != base + 1) {
            throw new IllegalArgumentException("a delta goes from one version to the next: " + base + " -> " + target);
        }
    }

    /** A delta whose lineages are not known (written before lineages existed, or in a test that does not need them). */
    public RulesDelta(String cluster, long base, long target, Instant createdAt, RulesDiff diff) {
        this(cluster, base, target, createdAt, diff, Lineage.UNKNOWN, Lineage.UNKNOWN);
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
        String nodesJson = Json.generate(g -> FragmentJson.writeNodes(g, diff.nodes()));
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
            int part = i + 1;
            List<String> group = groups.get(i);
            // The fragments go in as the JSON text they were measured as.
            out.add(Json.generate(g -> {
                g.writeStartObject();
                g.writeNumberProperty("v", FORMAT);
                g.writeStringProperty("cluster", cluster);
                g.writeNumberProperty("base", base);
                g.writeNumberProperty("target", target);
                g.writeStringProperty("createdAt", createdAt.toString());
                if (!lineage.isEmpty()) {
                    g.writeStringProperty("baseLineage", baseLineage);
                    g.writeStringProperty("lineage", lineage);
                }
                g.writeNumberProperty("part", part);
                g.writeNumberProperty("parts", groups.size());
                g.writeName("fragments");
                g.writeStartArray();
                group.forEach(g::writeRawValue);
                g.writeEndArray();
                g.writeName("nodes");
                g.writeRawValue(part == 1 ? nodesJson : "[]");
                g.writeEndObject();
            }));
        }
        return out;
    }

    /** Reads a delta sent as several parts (in any order). */
    public static RulesDelta fromJsonParts(List<String> parts) {
        List<RulesDelta> read = new ArrayList<>();
        Map<Integer, RulesDelta> byPart = new TreeMap<>();
        int expected = -1;
        for (String p : parts) {
            Part one = FragmentJson.readObject(p, "delta", RulesDelta::read);
            expected = one.parts();
            byPart.put(one.part(), one.delta());
        }
        if (byPart.size() != expected) {
            throw new IllegalArgumentException("delta has " + byPart.size() + " of " + expected + " parts");
        }
        read.addAll(byPart.values());
        RulesDelta first = read.get(0);
        List<RulesDiff.FragmentChange> fragments = new ArrayList<>();
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        for (RulesDelta d : read) {
            if (!d.cluster().equals(first.cluster())
                    || d.target() != first.target()
                    || !d.lineage().equals(first.lineage())) {
                throw new IllegalArgumentException("parts of different deltas");
            }
            fragments.addAll(d.diff().fragments());
            nodes.addAll(d.diff().nodes());
        }
        return new RulesDelta(
                first.cluster(),
                first.base(),
                first.target(),
                first.createdAt(),
                new RulesDiff(fragments, nodes),
                first.baseLineage(),
                first.lineage());
    }

    /** Which part of its delta a message is, and of how many: {@code [part, parts]}. */
    public static int[] partOf(String json) {
        // Only the two numbers: the fragments are skipped, not parsed and hashed (fromJson does that).
        return FragmentJson.readObject(json, "delta", p -> {
            long part = 1;
            long parts = 1;
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                p.nextToken();
                switch (name) {
                    case "part" -> part = FragmentJson.whole(p, "part");
                    case "parts" -> parts = FragmentJson.whole(p, "parts");
                    default -> p.skipChildren();
                }
            }
            try {
                return new int[] {Math.toIntExact(part), Math.toIntExact(parts)};
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("delta part " + part + " of " + parts + " is out of range", e);
            }
        });
    }

    /**
     * Reads a one-part delta. The "before" side of each change is not on the wire (the receiver has it), so
     * the diff read back holds afters only; removals come back with an empty fragment as "before".
     */
    public static RulesDelta fromJson(String json) {
        return fromJsonParts(List.of(json));
    }

    /** One message of a delta: which part of how many, and what it holds. */
    private record Part(int part, int parts, RulesDelta delta) {}

    private static Part read(JsonParser p) {
        try {
            String cluster = null;
            Long base = null;
            Long target = null;
            String createdAt = null;
            String baseLineage = Lineage.UNKNOWN;
            String lineage = Lineage.UNKNOWN;
            long part = 1;
            long parts = 1;
            List<RulesDiff.FragmentChange> fragments = null;
            List<RulesDiff.NodeChange> nodes = null;
            boolean format = false;
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                p.nextToken();
                switch (name) {
                    case "v" -> format = checkFormat(p);
                    case "cluster" -> cluster = FragmentJson.text(p, "cluster");
                    case "base" -> base = FragmentJson.whole(p, "base");
                    case "target" -> target = FragmentJson.whole(p, "target");
                    case "createdAt" -> createdAt = FragmentJson.text(p, "createdAt");
                    case "baseLineage" ->
                        baseLineage = Lineage.check("baseLineage", FragmentJson.text(p, "baseLineage"));
                    case "lineage" -> lineage = Lineage.check("lineage", FragmentJson.text(p, "lineage"));
                    case "part" -> part = FragmentJson.whole(p, "part");
                    case "parts" -> parts = FragmentJson.whole(p, "parts");
                    case "fragments" -> fragments = FragmentJson.readFragments(p);
                    case "nodes" -> nodes = FragmentJson.readNodes(p);
                    default -> p.skipChildren();
                }
            }
            if (!format) {
                throw new IllegalArgumentException("v: delta format null is not supported");
            }
            RulesDelta delta = new RulesDelta(
                    FragmentJson.required(cluster, "cluster"),
                    FragmentJson.required(base, "base"),
                    FragmentJson.required(target, "target"),
                    Instant.parse(FragmentJson.required(createdAt, "createdAt")),
                    new RulesDiff(FragmentJson.required(fragments, "fragments"), FragmentJson.required(nodes, "nodes")),
                    baseLineage,
                    lineage);
            return new Part(Math.toIntExact(part), Math.toIntExact(parts), delta);
        } catch (FragmentJson.WrongField | DateTimeParseException | ArithmeticException e) {
            throw new IllegalArgumentException(
                    "delta is missing a field or has one of the wrong type: " + e.getMessage(), e);
        }
    }

    private static boolean checkFormat(JsonParser p) {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT || p.getLongValue() != FORMAT) {
            throw new IllegalArgumentException("v: delta format " + p.getString() + " is not supported");
        }
        return true;
    }
}
