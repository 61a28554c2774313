package io.rulesync.model.rules;

import io.rulesync.model.event.Json;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The whole rules of a cluster at one version, usually cut down to one node
 * ({@link ClusterRules#forNode}): what an agent loads when it starts, or when a delta does not
 * follow the version it runs. Same fragment encoding as {@link RulesDelta}.
 */
public record RulesSnapshot(String cluster, long version, Instant createdAt, ClusterRules rules, String lineage) {
    public static final int FORMAT = 1;

    /** @param lineage the version's {@link Lineage} */
    public RulesSnapshot {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(rules, "rules");
        Objects.requireNonNull(lineage, "lineage");
        if (version < 0) {
            throw new IllegalArgumentException("version " + version + " is negative");
        }
    }

    /** A snapshot whose lineage is not known. */
    public RulesSnapshot(String cluster, long version, Instant createdAt, ClusterRules rules) {
        this(cluster, version, createdAt, rules, Lineage.UNKNOWN);
    }

    public String toJson() {
        StringBuilder out = new StringBuilder(jsonHead(cluster, version, lineage, createdAt));
        boolean first = true;
        for (var e : rules.fragments().entrySet()) {
            out.append(first ? "" : ",").append(fragmentJson(e.getKey(), e.getValue()));
            first = false;
        }
        return out.append(jsonTail(rules.nodes())).toString();
    }

    /*
     * toJson in three parts, so a server can assemble a node's snapshot from parts it prepared once per version (the
     * api compresses each node class's fragments once): jsonHead, the fragments' JSON joined by commas, jsonTail. The
     * reader takes fragments in any order.
     */

    /** Everything before the first fragment: {@code {"v":1,"cluster":...,"fragments":[}. */
    public static String jsonHead(String cluster, long version, String lineage, Instant createdAt) {
        String whole = Json.generate(g -> {
            g.writeStartObject();
            g.writeNumberProperty("v", FORMAT);
            g.writeStringProperty("cluster", cluster);
            g.writeNumberProperty("version", version);
            if (!lineage.isEmpty()) {
                g.writeStringProperty("lineage", lineage);
            }
            g.writeStringProperty("createdAt", createdAt.toString());
            g.writeName("fragments");
            g.writeStartArray();
            g.writeEndArray();
            g.writeEndObject();
        });
        return whole.substring(0, whole.length() - 2); // without "]}"
    }

    /** One fragment of the list. */
    public static String fragmentJson(FragmentKey key, RuleFragment fragment) {
        return FragmentJson.fragment(key, fragment);
    }

    /** Everything after the last fragment: the nodes (name and zone) and the closing brace. */
    public static String jsonTail(java.util.Map<String, String> nodeZones) {
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        nodeZones.forEach((n, z) -> nodes.add(new RulesDiff.NodeChange(n, null, z)));
        return "],\"nodes\":" + Json.generate(g -> FragmentJson.writeNodes(g, nodes)) + "}";
    }

    /**
     * Reads {@link #toJson}, streaming (a node's snapshot at 10k Services is ~46 MB); throws
     * {@link IllegalArgumentException} naming what is wrong.
     */
    public static RulesSnapshot fromJson(String json) {
        return FragmentJson.readObject(json, "snapshot", RulesSnapshot::read);
    }

    /** {@link #fromJson(String)} from UTF-8 bytes as they arrive: the text is never held whole. */
    public static RulesSnapshot fromJson(java.io.InputStream json) {
        return FragmentJson.readObject(json, "snapshot", RulesSnapshot::read);
    }

    private static RulesSnapshot read(JsonParser p) {
        try {
            String cluster = null;
            Long version = null;
            String createdAt = null;
            String lineage = Lineage.UNKNOWN;
            List<RulesDiff.FragmentChange> fragments = null;
            List<RulesDiff.NodeChange> nodes = null;
            boolean format = false;
            for (String name = p.nextName(); name != null; name = p.nextName()) {
                p.nextToken();
                switch (name) {
                    case "v" -> format = checkFormat(p);
                    case "cluster" -> cluster = FragmentJson.text(p, "cluster");
                    case "version" -> version = FragmentJson.whole(p, "version");
                    case "createdAt" -> createdAt = FragmentJson.text(p, "createdAt");
                    case "lineage" -> lineage = Lineage.check("lineage", FragmentJson.text(p, "lineage"));
                    case "fragments" -> fragments = FragmentJson.readFragments(p);
                    case "nodes" -> nodes = FragmentJson.readNodes(p);
                    default -> p.skipChildren();
                }
            }
            if (!format) {
                throw new IllegalArgumentException("v: snapshot format null is not supported");
            }
            RulesDiff diff =
                    new RulesDiff(FragmentJson.required(fragments, "fragments"), FragmentJson.required(nodes, "nodes"));
            return new RulesSnapshot(
                    FragmentJson.required(cluster, "cluster"),
                    FragmentJson.required(version, "version"),
                    Instant.parse(FragmentJson.required(createdAt, "createdAt")),
                    diff.applyTo(ClusterRules.EMPTY),
                    lineage);
        } catch (FragmentJson.WrongField | DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "snapshot is missing a field or has one of the wrong type: " + e.getMessage(), e);
        }
    }

    private static boolean checkFormat(JsonParser p) {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT || p.getLongValue() != FORMAT) {
            throw new IllegalArgumentException("v: snapshot format " + p.getString() + " is not supported");
        }
        return true;
    }
}
