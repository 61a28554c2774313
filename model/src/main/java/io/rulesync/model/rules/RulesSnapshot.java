package io.rulesync.model.rules;

import io.rulesync.model.event.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The whole rules of a cluster at one version, usually cut down to one node
 * ({@link ClusterRules#forNode}): what an agent loads when it starts, or when a delta does not
 * follow the version it runs. Same fragment encoding as {@link RulesDelta}.
 */
public record RulesSnapshot(String cluster, long version, Instant createdAt, ClusterRules rules) {
    public static final int FORMAT = 1;

    public RulesSnapshot {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(rules, "rules");
        if (version < 0) {
            throw new IllegalArgumentException("version " + version + " is negative");
        }
    }

    public String toJson() {
        List<String> fragments = new ArrayList<>(rules.fragments().size());
        rules.fragments().forEach((k, f) -> fragments.add(FragmentJson.fragment(k, f)));
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        rules.nodes().forEach((n, z) -> nodes.add(new RulesDiff.NodeChange(n, null, z)));
        return "{\"v\":" + FORMAT + ",\"cluster\":" + Json.write(cluster) + ",\"version\":" + version
                + ",\"createdAt\":" + Json.write(createdAt.toString()) + ",\"fragments\":[" + String.join(",", fragments)
                + "],\"nodes\":" + FragmentJson.nodes(nodes) + "}";
    }

    /**
     * Reads {@link #toJson}; throws {@link IllegalArgumentException} naming what is wrong. No size
     * limit (the parser's default is 3 MB): a node's snapshot at 10k Services is ~35 MB.
     */
    public static RulesSnapshot fromJson(String json) {
        Object parsed;
        try {
            parsed = new Load(LoadSettings.builder().setAllowDuplicateKeys(false).setCodePointLimit(Integer.MAX_VALUE).build()).loadFromString(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("snapshot is not JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("snapshot is not a JSON object");
        }
        if (!Integer.valueOf(FORMAT).equals(m.get("v"))) {
            throw new IllegalArgumentException("v: snapshot format " + m.get("v") + " is not supported");
        }
        try {
            RulesDiff diff = new RulesDiff(FragmentJson.readFragments((List<?>) m.get("fragments")),
                    FragmentJson.readNodes((List<?>) m.get("nodes")));
            return new RulesSnapshot((String) m.get("cluster"), ((Number) m.get("version")).longValue(),
                    Instant.parse((String) m.get("createdAt")), diff.applyTo(ClusterRules.EMPTY));
        } catch (ClassCastException | NullPointerException e) {
            throw new IllegalArgumentException("snapshot is missing a field or has one of the wrong type", e);
        }
    }
}
