package io.rulesync.agent.ipvs;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One {@code ipset restore} script that moves one family's IPVS-mode sets from what the kernel holds
 * to what {@link IpvsRules#ipsetRestore()} declares, touching only sets that differ. Pure.
 *
 * <ul>
 *   <li>A missing set is created as declared and filled: nothing can match it yet.</li>
 *   <li>A set whose members or header (maxelem, range, ...) differ is rebuilt beside it in a
 *       temporary set and {@code swap}ped in, so packets see the old members or the new ones, never
 *       a half-filled set, and iptables rules that reference it keep working. The swap takes the
 *       header along, so the declared header arrives too.</li>
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
public record IpsetPlan(String script, List<String> created, List<String> swapped, List<String> recreated,
        List<String> untouched, List<String> leftovers) {

    public IpsetPlan {
        Objects.requireNonNull(script, "script");
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
            } else if (!h.canonicalMembers().equals(w.canonicalMembers()) || headerDiffers(w, h)) {
                swapped.add(w.name());
                String temp = prefix + temps++;
                // -exist: a temporary set of that name may or may not be there.
                swaps.append("destroy ").append(temp).append(" -exist\n");
                fill(swaps, w, temp);
                swaps.append("swap ").append(temp).append(' ').append(w.name()).append('\n');
                swaps.append("destroy ").append(temp).append('\n');
            } else {
                untouched.add(w.name());
            }
        }
        return new IpsetPlan(head.toString() + swaps + tail, created, swapped, recreated, untouched, leftovers);
    }

    /** The declared create line under {@code as}, then each member once (two spellings of one member would be refused). */
    private static void fill(StringBuilder out, SavedSet w, String as) {
        out.append(w.createLine(as)).append('\n');
        Map<String, String> once = new LinkedHashMap<>();
        w.members().forEach(m -> once.putIfAbsent(SetMember.canonical(w.type(), m), m));
        once.values().forEach(m -> out.append("add ").append(as).append(' ').append(m).append('\n'));
    }

    private static boolean headerDiffers(SavedSet want, SavedSet have) {
        for (Map.Entry<String, String> e : want.options().entrySet()) {
            if (!e.getKey().equals("hashsize") && !e.getValue().equals(have.options().get(e.getKey()))) {
                return true;
            }
        }
        // A flag the kernel's set has and the declaration lacks (counters, comment, ...).
        return have.options().keySet().stream().anyMatch(k -> SavedSet.FLAGS.contains(k) && !want.options().containsKey(k));
    }
}
