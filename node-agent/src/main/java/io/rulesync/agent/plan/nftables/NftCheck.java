package io.rulesync.agent.plan.nftables;

import io.rulesync.model.nftables.NftContent;
import io.rulesync.model.nftables.NftOp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Compares what the kernel holds of the {@code kube-proxy} table with a version's table. Pure.
 *
 * <p>The kernel lists rules in its own form, not the one written ({@code nft} prints a rule back differently), so a
 * chain is compared with the version by its number of rules, and with the kernel's own earlier reading of it (taken
 * right after it was written and checked) rule by rule: a rule edited in place is caught by the second. Sets and maps
 * are compared by their number of elements, except the affinity sets, which the kernel fills itself.
 */
public final class NftCheck {
    private NftCheck() {}

    /** The chains and their rule counts, and the sets and maps with their element counts, that a table holds. */
    public record Expected(Map<String, Integer> rules, Map<String, Integer> elements) {
        public static Expected of(NftContent table) {
            Map<String, Integer> rules = new HashMap<>();
            table.chains()
                    .forEach((name, chain) -> rules.put(name, chain.rules().size()));
            Map<String, Integer> elements = new HashMap<>();
            table.sets()
                    .forEach((name, op) -> elements.put(
                            name, op instanceof NftOp.AddSet s && s.flags().contains("dynamic") ? DYNAMIC : 0));
            table.elements().values().forEach(e -> elements.merge(e.set(), 1, Integer::sum));
            return new Expected(Map.copyOf(rules), Map.copyOf(elements));
        }
    }

    /** An affinity set: its elements are the kernel's business. */
    static final int DYNAMIC = -1;

    /**
     * What differs, one line each (empty: nothing).
     *
     * @param earlier the kernel's own reading of chains after they were written and checked (chain to rules); a chain
     *                not in it is compared by its count only
     */
    public static List<String> problems(
            Expected expected, Optional<KernelTable> kernel, Map<String, List<String>> earlier) {
        if (kernel.isEmpty()) {
            return List.of("the kube-proxy table is missing");
        }
        KernelTable k = kernel.get();
        List<String> out = new ArrayList<>();
        for (String chain : new TreeSet<>(expected.rules().keySet())) {
            List<String> now = k.chains().get(chain);
            int want = expected.rules().get(chain);
            if (now == null) {
                out.add("chain " + chain + " is missing");
            } else if (now.size() != want) {
                out.add("chain " + chain + " has " + now.size() + " rules, not " + want);
            } else if (earlier.containsKey(chain) && !earlier.get(chain).equals(now)) {
                out.add("chain " + chain + " was changed");
            }
        }
        for (String chain : new TreeSet<>(k.chains().keySet())) {
            if (!expected.rules().containsKey(chain)) {
                out.add("chain " + chain + " is not the version's");
            }
        }
        for (String set : new TreeSet<>(expected.elements().keySet())) {
            Integer now = k.elements().get(set);
            int want = expected.elements().get(set);
            if (now == null) {
                out.add("set " + set + " is missing");
            } else if (want != DYNAMIC && now != want) {
                out.add("set " + set + " has " + now + " elements, not " + want);
            }
        }
        for (String set : new TreeSet<>(k.elements().keySet())) {
            if (!expected.elements().containsKey(set)) {
                out.add("set " + set + " is not the version's");
            }
        }
        return out;
    }
}
