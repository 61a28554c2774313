package io.rulesync.api.rollout;

import io.rulesync.model.cluster.KubernetesNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A Kubernetes label selector ({@code matchLabels} and {@code matchExpressions}, as a Deployment or a NetworkPolicy has
 * them) that picks a rollout wave's nodes by their labels. Every requirement must hold; a selector with none is refused,
 * since it would select every node.
 */
public record NodeSelector(SortedMap<String, String> matchLabels, List<Requirement> matchExpressions) {

    public enum Operator {
        In,
        NotIn,
        Exists,
        DoesNotExist
    }

    /** One of {@code matchExpressions}: {@code key} with {@code operator} and, for In and NotIn, {@code values}. */
    public record Requirement(String key, Operator operator, List<String> values) {
        public Requirement {
            values = List.copyOf(values);
        }

        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case In -> v != null && values.contains(v);
                case NotIn -> v == null || !values.contains(v);
                case Exists -> v != null;
                case DoesNotExist -> v == null;
            };
        }
    }

    public NodeSelector {
        matchLabels = new TreeMap<>(matchLabels);
        matchExpressions = List.copyOf(matchExpressions);
    }

    /** Whether a node with {@code labels} is selected. */
    public boolean matches(Map<String, String> labels) {
        for (Map.Entry<String, String> e : matchLabels.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        return matchExpressions.stream().allMatch(r -> r.matches(labels));
    }

    /**
     * Reads a selector as an operator writes it, {@code at} naming where (for errors):
     * <pre>{"matchLabels": {"rollout": "canary"}, "matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}</pre>
     *
     * @throws IllegalArgumentException naming the field at fault
     */
    static NodeSelector from(Object v, String at) {
        if (!(v instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(at + ": expected an object with matchLabels or matchExpressions");
        }
        for (Object k : m.keySet()) {
            if (!Set.of("matchLabels", "matchExpressions").contains(String.valueOf(k))) {
                throw new IllegalArgumentException(at + "." + KubernetesNames.printable(String.valueOf(k))
                        + ": unknown field (known: matchExpressions, matchLabels)");
            }
        }
        SortedMap<String, String> labels = new TreeMap<>();
        if (m.containsKey("matchLabels")) {
            if (!(m.get("matchLabels") instanceof Map<?, ?> ml)) {
                throw new IllegalArgumentException(at + ".matchLabels: expected an object of label keys and values");
            }
            for (Map.Entry<?, ?> e : ml.entrySet()) {
                String key = key(e.getKey(), at + ".matchLabels");
                labels.put(key, value(e.getValue(), at + ".matchLabels." + key));
            }
        }
        List<Requirement> requirements = new ArrayList<>();
        if (m.containsKey("matchExpressions")) {
            if (!(m.get("matchExpressions") instanceof List<?> list)) {
                throw new IllegalArgumentException(at + ".matchExpressions: expected a list");
            }
            for (int i = 0; i < list.size(); i++) {
                requirements.add(requirement(list.get(i), at + ".matchExpressions[" + i + "]"));
            }
        }
        if (labels.isEmpty() && requirements.isEmpty()) {
            throw new IllegalArgumentException(
                    at + ": selects every node; give at least one of matchLabels and matchExpressions "
                            + "(for every node left, use percent: 100)");
        }
        return new NodeSelector(labels, requirements);
    }

    private static Requirement requirement(Object v, String at) {
        if (!(v instanceof Map<?, ?> r)) {
            throw new IllegalArgumentException(at + ": expected an object with key, operator and values");
        }
        for (Object k : r.keySet()) {
            if (!Set.of("key", "operator", "values").contains(String.valueOf(k))) {
                throw new IllegalArgumentException(at + "." + KubernetesNames.printable(String.valueOf(k))
                        + ": unknown field (known: key, operator, values)");
            }
        }
        String key = key(r.get("key"), at + ".key");
        Operator op;
        try {
            op = Operator.valueOf(String.valueOf(r.get("operator")));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    at + ".operator: '" + KubernetesNames.printable(String.valueOf(r.get("operator")))
                            + "' is not In, NotIn, Exists or DoesNotExist");
        }
        List<String> values = new ArrayList<>();
        if (r.get("values") instanceof List<?> vs) {
            for (int j = 0; j < vs.size(); j++) {
                values.add(value(vs.get(j), at + ".values[" + j + "]"));
            }
        } else if (r.containsKey("values")) {
            throw new IllegalArgumentException(at + ".values: expected a list of label values");
        }
        boolean set = op == Operator.In || op == Operator.NotIn;
        if (set && values.isEmpty()) {
            throw new IllegalArgumentException(at + ".values: " + op + " needs at least one value");
        }
        if (!set && !values.isEmpty()) {
            throw new IllegalArgumentException(at + ".values: " + op + " takes no values");
        }
        return new Requirement(key, op, values);
    }

    private static String key(Object k, String at) {
        String bad = k instanceof String s ? KubernetesNames.checkQualifiedName(s) : "a label key is required";
        if (bad != null) {
            throw new IllegalArgumentException(at + ": " + bad);
        }
        return (String) k;
    }

    private static String value(Object v, String at) {
        String bad =
                v instanceof String s ? KubernetesNames.checkLabelValue(s) : "a label value (a string) is required";
        if (bad != null) {
            throw new IllegalArgumentException(at + ": " + bad);
        }
        return (String) v;
    }

    /** The selector as {@link #from} reads it back. */
    Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        if (!matchLabels.isEmpty()) {
            out.put("matchLabels", matchLabels);
        }
        if (!matchExpressions.isEmpty()) {
            List<Object> rs = new ArrayList<>();
            for (Requirement r : matchExpressions) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("key", r.key());
                o.put("operator", r.operator().name());
                if (!r.values().isEmpty()) {
                    o.put("values", r.values());
                }
                rs.add(o);
            }
            out.put("matchExpressions", rs);
        }
        return out;
    }
}
