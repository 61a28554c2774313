package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpFamily;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One set in {@code ipset save} form ({@code create NAME TYPE OPTIONS} then {@code add NAME MEMBER}
 * lines), which is also the form {@code IpvsRules.ipsetRestore()} writes, so both sides read alike.
 *
 * @param options the create line's options in order; flags without a value ({@code counters}) map to ""
 * @param members as written, in order
 */
public record SavedSet(String name, String type, Map<String, String> options, List<String> members) {

    /** Create options that take no value. */
    static final Set<String> FLAGS = Set.of("counters", "comment", "skbinfo", "forceadd");

    public SavedSet {
        options = Collections.unmodifiableMap(new LinkedHashMap<>(options));
        members = List.copyOf(members);
    }

    /**
     * Every set of a save text, in its order. Only the first word after the set name of an
     * {@code add} line is the member (options such as {@code timeout 5} may follow).
     *
     * @throws IllegalArgumentException on a line that is neither create nor add, or an add before its create
     */
    public static Map<String, SavedSet> parseAll(String text) {
        Map<String, String> types = new LinkedHashMap<>();
        Map<String, Map<String, String>> options = new LinkedHashMap<>();
        Map<String, List<String>> members = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String t = line.strip();
            if (t.isEmpty() || t.startsWith("#")) {
                continue;
            }
            String[] f = t.split("\\s+");
            if (f[0].equals("create") && f.length >= 3) {
                types.put(f[1], f[2]);
                Map<String, String> o = new LinkedHashMap<>();
                for (int i = 3; i < f.length; i++) {
                    if (FLAGS.contains(f[i]) || i + 1 == f.length) {
                        o.put(f[i], "");
                    } else {
                        o.put(f[i], f[++i]);
                    }
                }
                options.put(f[1], o);
                members.put(f[1], new ArrayList<>());
            } else if (f[0].equals("add") && f.length >= 3) {
                List<String> m = members.get(f[1]);
                if (m == null) {
                    throw new IllegalArgumentException("member of an undeclared set: '" + t + "'");
                }
                m.add(f[2]);
            } else {
                throw new IllegalArgumentException("not an ipset save line: '" + t + "'");
            }
        }
        Map<String, SavedSet> out = new LinkedHashMap<>();
        types.forEach((name, type) -> out.put(name, new SavedSet(name, type, options.get(name), members.get(name))));
        return Collections.unmodifiableMap(out);
    }

    /** The members in ipset's printed form ({@link SetMember}), so equal sets compare equal. */
    public SortedSet<String> canonicalMembers() {
        SortedSet<String> out = new TreeSet<>();
        members.forEach(m -> out.add(SetMember.canonical(type, m)));
        return out;
    }

    /** The family of a hash set; null for a bitmap set, which has none. */
    public IpFamily family() {
        String f = options.get("family");
        return f == null ? null : f.equals("inet6") ? IpFamily.IPV6 : IpFamily.IPV4;
    }

    /** The create line for a set of this type and options under another name. */
    public String createLine(String as) {
        StringBuilder out = new StringBuilder("create ").append(as).append(' ').append(type);
        options.forEach((k, v) -> out.append(' ').append(k).append(v.isEmpty() ? "" : " " + v));
        return out.toString();
    }
}
