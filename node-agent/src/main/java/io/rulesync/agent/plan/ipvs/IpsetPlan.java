package io.rulesync.agent.plan.ipvs;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;

/**
 * One {@code ipset restore} script that moves one family's IPVS-mode sets from what the kernel holds
 * to what {@link IpvsRules#ipsetRestore()} declares, touching only sets that differ. Pure.
 *
 * <ul>
 *   <li>A missing set is created as declared and filled: nothing can match it yet.</li>
 *   <li>A set that keeps most of its members is patched in place: {@code del} and {@code add} lines
 *       for the members that differ. Each is atomic, and members are independent facts (this
 *       endpoint is hairpin, that port is a NodePort), so no packet meets a wrong combination; and
 *       it costs the change, not the set: one endpoint moved on a node with 37,000 hairpin entries
 *       takes two lines, where reading the sets back and swapping that one took 1.17 s.</li>
 *   <li>A set that is mostly replaced (more than half of its members change), or whose header
 *       (maxelem, range, ...) differs, is rebuilt beside it in a temporary set and {@code swap}ped
 *       in, so packets see the old members or the new ones, never a half-filled set, and iptables
 *       rules that reference it keep working. The swap takes the header along.</li>
 *   <li>A set of another type or family cannot be swapped (ipset refuses); it is destroyed and
 *       created again, last, which fails while an iptables rule still references it.</li>
 *   <li>Sets that match are not named at all. Temporary sets left by an interrupted run are destroyed.</li>
 * </ul>
 * The hash size is not compared: the kernel grows it as a set fills, and ipset prints the grown one.
 * {@code ipset restore} is not transactional (lines before a failing one stay applied), which is
 * why every live set changes by one swap line.
 *
 * @param script the restore input; empty when nothing differs
 */
public record IpsetPlan(
        String script,
        List<String> created,
        List<String> swapped,
        List<String> recreated,
        List<String> untouched,
        List<String> leftovers,
        List<String> patched) {

    public IpsetPlan {
        Objects.requireNonNull(script, "script");
        patched = List.copyOf(patched);
        created = List.copyOf(created);
        swapped = List.copyOf(swapped);
        recreated = List.copyOf(recreated);
        untouched = List.copyOf(untouched);
        leftovers = List.copyOf(leftovers);
    }

    public boolean isEmpty() {
        return script.isEmpty();
    }

    /** Temporary set names of a family: {@code RSYNC-TMP-4-0}, ... (two families may sync one after the other). */
    public static String tempPrefix(IpFamily family) {
        return "RSYNC-TMP-" + (family == IpFamily.IPV4 ? "4" : "6") + "-";
    }

    /**
     * @param desired the family's rules; their {@code ipsetRestore()} text is the declaration
     * @param saved {@code ipset save} output of the kernel (all sets; others are ignored)
     */
    public static IpsetPlan plan(IpvsRules desired, String saved) {
        Map<String, SavedSet> want = SavedSet.parseAll(desired.ipsetRestore());
        Map<String, SavedSet> have = SavedSet.parseAll(saved);
        String prefix = tempPrefix(desired.family());
        StringBuilder head = new StringBuilder();
        StringBuilder swaps = new StringBuilder();
        StringBuilder tail = new StringBuilder();
        List<String> created = new ArrayList<>();
        List<String> swapped = new ArrayList<>();
        List<String> recreated = new ArrayList<>();
        List<String> untouched = new ArrayList<>();
        List<String> leftovers = new ArrayList<>();
        List<String> patched = new ArrayList<>();
        for (String name : have.keySet()) {
            if (name.startsWith(prefix)) {
                leftovers.add(name);
                head.append("destroy ").append(name).append('\n');
            }
        }
        int temps = 0;
        for (SavedSet w : want.values()) {
            SavedSet h = have.get(w.name());
            if (h == null) {
                created.add(w.name());
                fill(head, w, w.name());
            } else if (!h.type().equals(w.type()) || !Objects.equals(h.family(), w.family())) {
                recreated.add(w.name());
                tail.append("destroy ").append(w.name()).append('\n');
                fill(tail, w, w.name());
            } else if (headerDiffers(w, h)) {
                swapped.add(w.name());
                swap(swaps, w.createLine(prefix + temps), w.name(), prefix + temps++, w.members());
            } else {
                // Canonical forms on both sides; adds are written as declared, deletions as the kernel printed them.
                Map<String, String> wantMembers = canonicalToWritten(w);
                Map<String, String> haveMembers = canonicalToWritten(h);
                List<String> adds = new ArrayList<>();
                List<String> dels = new ArrayList<>();
                wantMembers.forEach((c, m) -> {
                    if (!haveMembers.containsKey(c)) {
                        adds.add(m);
                    }
                });
                haveMembers.forEach((c, m) -> {
                    if (!wantMembers.containsKey(c)) {
                        dels.add(m);
                    }
                });
                if (adds.isEmpty() && dels.isEmpty()) {
                    untouched.add(w.name());
                } else if (patchable(adds.size() + dels.size(), wantMembers.size())) {
                    patched.add(w.name());
                    patch(swaps, w.name(), dels, adds);
                } else {
                    swapped.add(w.name());
                    swap(
                            swaps,
                            w.createLine(prefix + temps),
                            w.name(),
                            prefix + temps++,
                            List.copyOf(wantMembers.values()));
                }
            }
        }
        return new IpsetPlan(
                head.toString() + swaps + tail, created, swapped, recreated, untouched, leftovers, patched);
    }

    /**
     * From {@code before} to {@code after} when the kernel holds {@code before} (the agent applied it
     * and nothing has drifted since): the same decisions as {@link #plan}, without reading the kernel.
     * Both sides are the compiler's writing, so members compare as written.
     */
    public static IpsetPlan between(IpvsRules before, IpvsRules after) {
        if (before.family() != after.family()) {
            throw new IllegalArgumentException("sets of " + before.family() + " and " + after.family());
        }
        StringBuilder out = new StringBuilder();
        List<String> swapped = new ArrayList<>();
        List<String> patched = new ArrayList<>();
        List<String> untouched = new ArrayList<>();
        String prefix = tempPrefix(after.family());
        int temps = 0;
        for (IpvsSet s : IpvsSet.values()) {
            String name = s.name(after.family());
            SortedSet<String> was = before.sets().get(s);
            SortedSet<String> now = after.sets().get(s);
            List<String> adds = now.stream().filter(m -> !was.contains(m)).toList();
            List<String> dels = was.stream().filter(m -> !now.contains(m)).toList();
            if (adds.isEmpty() && dels.isEmpty()) {
                untouched.add(name);
            } else if (patchable(adds.size() + dels.size(), now.size())) {
                patched.add(name);
                patch(out, name, dels, adds);
            } else {
                swapped.add(name);
                swap(out, after.createLine(s, prefix + temps), name, prefix + temps++, List.copyOf(now));
            }
        }
        return new IpsetPlan(out.toString(), List.of(), swapped, List.of(), untouched, List.of(), patched);
    }

    /** Patch when at most half the resulting set changes; otherwise rebuild and swap. */
    private static boolean patchable(int changes, int size) {
        return 2L * changes <= size;
    }

    /** -exist: deleting a missing member or adding a present one is not an error, so a repeated patch is harmless. */
    private static void patch(StringBuilder out, String name, List<String> dels, List<String> adds) {
        dels.forEach(m -> out.append("del ").append(name).append(' ').append(m).append(" -exist\n"));
        adds.forEach(m -> out.append("add ").append(name).append(' ').append(m).append(" -exist\n"));
    }

    private static void swap(StringBuilder out, String createTemp, String name, String temp, List<String> members) {
        // -exist: a temporary set of that name may or may not be there.
        out.append("destroy ").append(temp).append(" -exist\n");
        out.append(createTemp).append('\n');
        members.forEach(
                m -> out.append("add ").append(temp).append(' ').append(m).append('\n'));
        out.append("swap ").append(temp).append(' ').append(name).append('\n');
        out.append("destroy ").append(temp).append('\n');
    }

    /** Canonical form to the member as written (the first spelling of each). */
    private static Map<String, String> canonicalToWritten(SavedSet set) {
        Map<String, String> out = new LinkedHashMap<>();
        set.members().forEach(m -> out.putIfAbsent(SetMember.canonical(set.type(), m), m));
        return out;
    }

    /** The declared create line under {@code as}, then each member once (two spellings of one member would be refused). */
    private static void fill(StringBuilder out, SavedSet w, String as) {
        out.append(w.createLine(as)).append('\n');
        Map<String, String> once = new LinkedHashMap<>();
        w.members().forEach(m -> once.putIfAbsent(SetMember.canonical(w.type(), m), m));
        once.values()
                .forEach(
                        m -> out.append("add ").append(as).append(' ').append(m).append('\n'));
    }

    private static boolean headerDiffers(SavedSet want, SavedSet have) {
        for (Map.Entry<String, String> e : want.options().entrySet()) {
            if (!e.getKey().equals("hashsize")
                    && !e.getValue().equals(have.options().get(e.getKey()))) {
                return true;
            }
        }
        // A flag the kernel's set has and the declaration lacks (counters, comment, ...).
        return have.options().keySet().stream()
                .anyMatch(k -> SavedSet.FLAGS.contains(k) && !want.options().containsKey(k));
    }
}
