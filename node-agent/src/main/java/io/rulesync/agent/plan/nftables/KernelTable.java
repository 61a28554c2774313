package io.rulesync.agent.plan.nftables;

import java.util.List;
import java.util.Map;

/**
 * What the kernel holds of a {@code kube-proxy} table, as read back: each chain's rules (each rule as the kernel lists
 * it, so two readings can be compared), and the number of elements of each set and map.
 */
public record KernelTable(Map<String, List<String>> chains, Map<String, Integer> elements) {
    public KernelTable {
        chains = Map.copyOf(chains);
        elements = Map.copyOf(elements);
    }
}
