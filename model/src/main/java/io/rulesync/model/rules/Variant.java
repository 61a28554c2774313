package io.rulesync.model.rules;

import java.util.Objects;

/**
 * Which nodes a fragment is for. Most units compile to one fragment for every node ({@link #ALL}).
 * A unit whose rules depend on the node (Local traffic policy, zone hints, load-balancer source
 * ranges that contain a node's IP, NodePort addresses) has one fragment per node class: a default
 * for nodes with nothing special ({@code node=*}), one per node that is special, and, when zone
 * hints matter, one per zone. A node takes the most specific variant that matches it
 * ({@link ClusterRules#ruleSet}).
 *
 * @param node a node name, or {@code *} for any node not named by another variant
 * @param zone a zone (possibly empty: nodes without a zone label), or {@code *} when zones do not matter
 */
public record Variant(String node, String zone) implements Comparable<Variant> {
    public static final String ANY = "*";
    public static final Variant ALL = new Variant(ANY, ANY);

    public Variant {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(zone, "zone");
    }

    /** {@code *}, {@code node=a}, {@code zone=z} or {@code node=a,zone=z}. */
    public String id() {
        if (this.equals(ALL)) {
            return ANY;
        }
        StringBuilder sb = new StringBuilder();
        if (!node.equals(ANY)) {
            sb.append("node=").append(node);
        }
        if (!zone.equals(ANY)) {
            sb.append(sb.length() > 0 ? "," : "").append("zone=").append(zone);
        }
        return sb.toString();
    }

    public static Variant parse(String id) {
        if (id.equals(ANY)) {
            return ALL;
        }
        String node = ANY;
        String zone = ANY;
        for (String part : id.split(",", -1)) {
            if (part.startsWith("node=")) {
                node = part.substring(5);
            } else if (part.startsWith("zone=")) {
                zone = part.substring(5);
            } else {
                throw new IllegalArgumentException("'" + id + "' is not a variant");
            }
        }
        return new Variant(node, zone);
    }

    @Override
    public int compareTo(Variant o) {
        int c = node.compareTo(o.node);
        return c != 0 ? c : zone.compareTo(o.zone);
    }

    @Override
    public String toString() {
        return id();
    }
}
