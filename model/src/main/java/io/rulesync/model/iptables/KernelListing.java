package io.rulesync.model.iptables;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.List;

/** What {@code iptables -t TABLE -S CHAIN} prints for a chain after it was restored: the agent's read-back check. */
public final class KernelListing {
    private KernelListing() {}

    /**
     * {@code -N CHAIN}, then one {@code -A} line per rule. Checks the chain with
     * {@link RuleGrammar#check(Table, IpFamily, Chain)} first, so a chain that could not have been
     * restored has no listing.
     */
    public static List<String> of(Table table, IpFamily family, Chain chain) {
        List<Rule> rules = RuleGrammar.check(table, family, chain);
        List<String> lines = new ArrayList<>(rules.size() + 1);
        lines.add("-N " + chain.name());
        for (Rule r : rules) {
            lines.add(r.kernelForm(family, chain.name()));
        }
        return List.copyOf(lines);
    }
}
