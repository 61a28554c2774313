package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The wire form of fragments and node changes, shared by deltas and snapshots. */
final class FragmentJson {
    private FragmentJson() {
    }

    /** One fragment change as JSON; {@code after} null means removed. */
    static String fragment(FragmentKey key, RuleFragment after) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("family", key.family().id());
        f.put("unit", key.unit().id());
        f.put("variant", key.variant().id());
        if (after == null) {
            f.put("removed", true);
        } else {
            f.put("hash", after.hash());
            f.put("rules", after.text());
        }
        return Json.write(f);
    }

    static String nodes(List<RulesDiff.NodeChange> changes) {
        List<Object> nodes = new ArrayList<>();
        for (RulesDiff.NodeChange n : changes) {
            Map<String, Object> node = new LinkedHashMap<>();
            node.put("node", n.node());
            if (n.zoneAfter() == null) {
                node.put("removed", true);
            } else {
                node.put("zone", n.zoneAfter());
            }
            nodes.add(node);
        }
        return Json.write(nodes);
    }

    /**
     * Reads fragment changes. The "before" side is not on the wire (the receiver has it), so they hold
     * afters only; removals come back with an empty fragment as "before". Every fragment's content
     * must match its hash.
     */
    static List<RulesDiff.FragmentChange> readFragments(List<?> list) {
        List<RulesDiff.FragmentChange> fragments = new ArrayList<>();
        for (Object o : list) {
            Map<?, ?> f = (Map<?, ?>) o;
            FragmentKey key = new FragmentKey(IpFamily.fromId((String) f.get("family")), Unit.parse((String) f.get("unit")),
                    Variant.parse((String) f.get("variant")));
            if (Boolean.TRUE.equals(f.get("removed"))) {
                fragments.add(new RulesDiff.FragmentChange(key, RuleFragment.EMPTY, null));
            } else {
                RuleFragment after = RuleFragment.parse((String) f.get("rules"));
                if (!after.hash().equals(f.get("hash"))) {
                    throw new IllegalArgumentException("fragment " + key.unit().id() + " (" + key.variant().id()
                            + "): content does not match its hash");
                }
                fragments.add(new RulesDiff.FragmentChange(key, null, after));
            }
        }
        return fragments;
    }

    static List<RulesDiff.NodeChange> readNodes(List<?> list) {
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        for (Object o : list) {
            Map<?, ?> n = (Map<?, ?>) o;
            nodes.add(new RulesDiff.NodeChange((String) n.get("node"), null,
                    Boolean.TRUE.equals(n.get("removed")) ? null : (String) n.get("zone")));
        }
        return nodes;
    }
}
