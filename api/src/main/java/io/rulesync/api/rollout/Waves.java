package io.rulesync.api.rollout;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which wave each node of a cluster is in, from a policy, the cluster's nodes (name to zone) and their labels. Pure and
 * stable: a node's wave depends on its own name, zone and labels and the policy, never on which other nodes exist, so
 * nodes that join or leave move nobody else (a node whose labels change may move). Named nodes, zones and label selectors
 * are placed first, the first wave that takes a node keeping it, whatever their wave's place in the list; percentage
 * waves cut the space of a hash of the node's name, the next {@code percent} of what
 * earlier percentage waves left, so on a small cluster a wave's share is near its percentage rather than exact.
 */
public final class Waves {
    private final List<List<String>> members;

    private Waves(List<List<String>> members) {
        this.members = members;
    }

    /** With {@code labels} by node name; a node missing from it has none (its labels are not known yet). */
    public static Waves assign(
            RolloutPolicy policy,
            String cluster,
            Map<String, String> nodeZones,
            Map<String, Map<String, String>> labels) {
        List<RolloutPolicy.Wave> ws = policy.waves();
        List<List<String>> out = new ArrayList<>();
        ws.forEach(w -> out.add(new ArrayList<>()));
        for (String node : nodeZones.keySet().stream().sorted().toList()) {
            out.get(waveOf(policy, cluster, node, nodeZones.get(node), labels.getOrDefault(node, Map.of())))
                    .add(node);
        }
        return new Waves(out.stream().map(List::copyOf).toList());
    }

    /** The wave of one node, whether or not it is a node of the cluster yet (one that joins gets this one). */
    public static int waveOf(
            RolloutPolicy policy, String cluster, String node, String zone, Map<String, String> labels) {
        List<RolloutPolicy.Wave> ws = policy.waves();
        for (int i = 0; i < ws.size(); i++) {
            RolloutPolicy.Wave w = ws.get(i);
            if (w.nodes() != null && w.nodes().contains(node)
                    || w.zone() != null && w.zone().equals(zone)
                    || w.selector() != null && w.selector().matches(labels)) {
                return i;
            }
        }
        double h = hash(cluster, node);
        double low = 0;
        for (int i = 0; i < ws.size(); i++) {
            Integer p = ws.get(i).percent();
            if (p == null) {
                continue;
            }
            double high = low + (1 - low) * p / 100.0;
            if (h >= low && h < high) {
                return i;
            }
            low = high;
        }
        return ws.size() - 1;
    }

    /** The nodes of wave {@code i}, by name. */
    public List<String> nodes(int i) {
        return members.get(i);
    }

    public int count() {
        return members.size();
    }

    /** The nodes of waves 0 to {@code last}. */
    public Set<String> upTo(int last) {
        Set<String> s = new HashSet<>();
        for (int i = 0; i <= last && i < members.size(); i++) {
            s.addAll(members.get(i));
        }
        return s;
    }

    /** A node's place in [0, 1), from SHA-256 of cluster and name: the same on every replica and every run. */
    static double hash(String cluster, String node) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest((cluster + "/" + node).getBytes(StandardCharsets.UTF_8));
            long v = 0;
            for (int i = 0; i < 7; i++) {
                v = v << 8 | (d[i] & 0xff);
            }
            return v / (double) (1L << 56);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
