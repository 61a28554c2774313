package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", FORMAT);
        m.put("cluster", cluster);
        m.put("base", base);
        m.put("target", target);
        m.put("createdAt", createdAt.toString());
        List<Object> fragments = new ArrayList<>();
        for (RulesDiff.FragmentChange c : diff.fragments()) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("family", c.key().family().id());
            f.put("unit", c.key().unit().id());
            f.put("variant", c.key().variant().id());
            if (c.after() == null) {
                f.put("removed", true);
            } else {
                f.put("hash", c.after().hash());
                f.put("rules", c.after().text());
            }
            fragments.add(f);
        }
        m.put("fragments", fragments);
        List<Object> nodes = new ArrayList<>();
        for (RulesDiff.NodeChange n : diff.nodes()) {
            Map<String, Object> node = new LinkedHashMap<>();
            node.put("node", n.node());
            if (n.zoneAfter() == null) {
                node.put("removed", true);
            } else {
                node.put("zone", n.zoneAfter());
            }
            nodes.add(node);
        }
        m.put("nodes", nodes);
        return Json.write(m);
    }

    /**
     * Reads a delta. The "before" side of each change is not on the wire (the receiver has it), so
     * the diff read back holds afters only; removals come back with an empty fragment as "before".
     */
    public static RulesDelta fromJson(String json) {
        Map<?, ?> m = (Map<?, ?>) new Load(LoadSettings.builder().setAllowDuplicateKeys(false).build()).loadFromString(json);
        if (!Integer.valueOf(FORMAT).equals(m.get("v"))) {
            throw new IllegalArgumentException("v: delta format " + m.get("v") + " is not supported");
        }
        List<RulesDiff.FragmentChange> fragments = new ArrayList<>();
        for (Object o : (List<?>) m.get("fragments")) {
            Map<?, ?> f = (Map<?, ?>) o;
            FragmentKey key = new FragmentKey(IpFamily.fromId((String) f.get("family")), Unit.parse((String) f.get("unit")),
                    Variant.parse((String) f.get("variant")));
            if (Boolean.TRUE.equals(f.get("removed"))) {
                fragments.add(new RulesDiff.FragmentChange(key, RuleFragment.EMPTY, null));
            } else {
                RuleFragment after = RuleFragment.parse((String) f.get("rules"));
                if (!after.hash().equals(f.get("hash"))) {
                    throw new IllegalArgumentException("fragment " + key + ": content does not match its hash");
                }
                fragments.add(new RulesDiff.FragmentChange(key, null, after));
            }
        }
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        for (Object o : (List<?>) m.get("nodes")) {
            Map<?, ?> n = (Map<?, ?>) o;
            nodes.add(new RulesDiff.NodeChange((String) n.get("node"), null,
                    Boolean.TRUE.equals(n.get("removed")) ? null : (String) n.get("zone")));
        }
        return new RulesDelta((String) m.get("cluster"), number(m.get("base")), number(m.get("target")),
                Instant.parse((String) m.get("createdAt")), new RulesDiff(fragments, nodes));
    }

    private static long number(Object o) {
        return ((Number) o).longValue();
    }
}
