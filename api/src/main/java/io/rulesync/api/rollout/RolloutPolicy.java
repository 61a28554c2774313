package io.rulesync.api.rollout;

import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import io.rulesync.store.DurationConverter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;

/**
 * How a cluster's new versions go out: in waves, each baking before the next opens, halted when nodes fail them.
 *
 * <p>A wave is explicit node names, the nodes of a zone ({@code topology.kubernetes.io/zone}), the nodes a label
 * selector picks, or a percentage of the nodes no earlier wave took. Nodes no wave takes join the last wave.
 *
 * @param waves      in order; at least one
 * @param unacked    the share of an opened wave (0-1) that may not have acked the version when {@code ackTimeout} is up
 *                   without failing it; the next wave also waits until no more than this share is missing
 * @param ackTimeout how long a wave's nodes have to acknowledge the version once it opens
 * @param onFailure  what a failed version does: stays where it is ({@code HALT}), or is rolled back ({@code ROLLBACK})
 */
public record RolloutPolicy(List<Wave> waves, double unacked, Duration ackTimeout, OnFailure onFailure) {

    public enum OnFailure {
        HALT,
        ROLLBACK
    }

    /** One wave: exactly one of {@code nodes}, {@code zone}, {@code selector} and {@code percent}, and how long it bakes once opened. */
    public record Wave(
            String name, List<String> nodes, String zone, NodeSelector selector, Integer percent, Duration bake) {
        public Wave {
            nodes = nodes == null ? null : List.copyOf(nodes);
        }
    }

    /** Whether any wave selects nodes by label (so their labels must be read). */
    public boolean selectsByLabel() {
        return waves.stream().anyMatch(w -> w.selector() != null);
    }

    public RolloutPolicy {
        waves = List.copyOf(waves);
    }

    /**
     * Reads a policy as an operator writes it (JSON, or the same map from YAML):
     * <pre>{"waves": [{"name": "canary", "nodes": ["n1", "n2"], "bake": "60s"},
     *            {"name": "pool-a", "selector": {"matchLabels": {"pool": "a"}}, "bake": "5m"}, {"name": "rest", "percent": 100}],
     *  "failWhen": {"unacked": 0.1, "ackTimeout": "2m"}, "onFailure": "halt"}</pre>
     *
     * @throws IllegalArgumentException naming the field at fault
     */
    public static RolloutPolicy from(Map<?, ?> m) {
        only(m, "", Set.of("waves", "failWhen", "onFailure"));
        if (!(m.get("waves") instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException("waves: a list of at least one wave is required");
        }
        List<Wave> waves = new ArrayList<>();
        Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String at = "waves[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> w)) {
                throw new IllegalArgumentException(at + ": expected an object");
            }
            only(w, at + ".", Set.of("name", "nodes", "zone", "selector", "percent", "bake"));
            String name = w.get("name") == null ? "wave-" + (i + 1) : text(w.get("name"), at + ".name");
            if (!names.add(name)) {
                throw new IllegalArgumentException(
                        at + ".name: '" + KubernetesNames.printable(name) + "' names an earlier wave too");
            }
            int chosen = (w.containsKey("nodes") ? 1 : 0)
                    + (w.containsKey("zone") ? 1 : 0)
                    + (w.containsKey("selector") ? 1 : 0)
                    + (w.containsKey("percent") ? 1 : 0);
            if (chosen != 1) {
                throw new IllegalArgumentException(at + ": give exactly one of nodes, zone, selector and percent");
            }
            List<String> nodes = null;
            if (w.get("nodes") instanceof List<?> ns && !ns.isEmpty()) {
                nodes = new ArrayList<>();
                for (int j = 0; j < ns.size(); j++) {
                    String n = text(ns.get(j), at + ".nodes[" + j + "]");
                    String bad = KubernetesNames.checkSubdomain(n);
                    if (bad != null) {
                        throw new IllegalArgumentException(at + ".nodes[" + j + "]: " + bad);
                    }
                    nodes.add(n);
                }
            } else if (w.containsKey("nodes")) {
                throw new IllegalArgumentException(at + ".nodes: a list of at least one node name is required");
            }
            String zone = w.containsKey("zone") ? text(w.get("zone"), at + ".zone") : null;
            NodeSelector selector =
                    w.containsKey("selector") ? NodeSelector.from(w.get("selector"), at + ".selector") : null;
            Integer percent = null;
            if (w.containsKey("percent")) {
                if (!(w.get("percent") instanceof Number p)
                        || p.doubleValue() != p.intValue()
                        || p.intValue() < 1
                        || p.intValue() > 100) {
                    throw new IllegalArgumentException(
                            at + ".percent: '" + w.get("percent") + "' is not a whole number 1-100");
                }
                percent = p.intValue();
            }
            waves.add(new Wave(
                    name, nodes, zone, selector, percent, duration(w.get("bake"), at + ".bake", Duration.ZERO)));
        }
        double unacked = 0;
        Duration ackTimeout = Duration.ofMinutes(2);
        if (m.containsKey("failWhen")) {
            if (!(m.get("failWhen") instanceof Map<?, ?> f)) {
                throw new IllegalArgumentException("failWhen: expected an object");
            }
            only(f, "failWhen.", Set.of("unacked", "ackTimeout"));
            if (f.containsKey("unacked")) {
                if (!(f.get("unacked") instanceof Number u) || u.doubleValue() < 0 || u.doubleValue() >= 1) {
                    throw new IllegalArgumentException("failWhen.unacked: '" + f.get("unacked")
                            + "' is not a share from 0 up to (not" + " including) 1");
                }
                unacked = u.doubleValue();
            }
            ackTimeout = duration(f.get("ackTimeout"), "failWhen.ackTimeout", ackTimeout);
            if (ackTimeout.isZero()) {
                throw new IllegalArgumentException("failWhen.ackTimeout: must be more than 0");
            }
        }
        OnFailure onFailure = OnFailure.HALT;
        if (m.containsKey("onFailure")) {
            String v = text(m.get("onFailure"), "onFailure");
            try {
                onFailure = OnFailure.valueOf(v.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "onFailure: '" + KubernetesNames.printable(v) + "' is not halt or rollback");
            }
        }
        return new RolloutPolicy(waves, unacked, ackTimeout, onFailure);
    }

    /** {@link #from} of a JSON text. */
    public static RolloutPolicy fromJson(String json) {
        Object tree;
        try {
            tree = Json.MAPPER.readValue(json, Object.class);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not JSON (" + KubernetesNames.printable(e.getOriginalMessage()) + ")");
        }
        if (!(tree instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("expected an object with waves");
        }
        return from(m);
    }

    /** The policy as {@link #from} reads it back (durations in seconds). */
    public Map<String, Object> toMap() {
        List<Object> ws = new ArrayList<>();
        for (Wave w : waves) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("name", w.name());
            if (w.nodes() != null) {
                o.put("nodes", w.nodes());
            } else if (w.zone() != null) {
                o.put("zone", w.zone());
            } else if (w.selector() != null) {
                o.put("selector", w.selector().toMap());
            } else {
                o.put("percent", w.percent());
            }
            o.put("bake", w.bake().toSeconds() + "s");
            ws.add(o);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("waves", ws);
        m.put("failWhen", Map.of("unacked", unacked, "ackTimeout", ackTimeout.toSeconds() + "s"));
        m.put("onFailure", onFailure.name().toLowerCase(Locale.ROOT));
        return m;
    }

    public String toJson() {
        return Json.MAPPER.writeValueAsString(toMap());
    }

    private static void only(Map<?, ?> m, String at, Set<String> known) {
        for (Object k : m.keySet()) {
            if (!known.contains(String.valueOf(k))) {
                throw new IllegalArgumentException(
                        at + KubernetesNames.printable(String.valueOf(k)) + ": unknown field (known: "
                                + String.join(", ", known.stream().sorted().toList()) + ")");
            }
        }
    }

    private static String text(Object v, String at) {
        if (!(v instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(at + ": a non-empty string is required");
        }
        return s;
    }

    private static Duration duration(Object v, String at, Duration absent) {
        if (v == null) {
            return absent;
        }
        try {
            Duration d = new DurationConverter().convert(String.valueOf(v));
            if (d.isNegative()) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(at + ": '" + KubernetesNames.printable(String.valueOf(v))
                    + "' is not a duration such " + "as 30s, 5m or 1h");
        }
    }
}
