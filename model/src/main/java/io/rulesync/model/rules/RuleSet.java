package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.List;
import java.util.Objects;

/**
 * The complete rules of one node for one IP family: the chains rulesync owns in the filter and nat
 * tables, in declaration order. {@link #render()} gives the iptables-restore input.
 */
public record RuleSet(IpFamily family, List<Chain> filter, List<Chain> nat) {
    public RuleSet {
        Objects.requireNonNull(family, "family");
        filter = List.copyOf(filter);
        nat = List.copyOf(nat);
    }

    public List<Chain> chains(Table table) {
        return table == Table.FILTER ? filter : nat;
    }

    /** Number of rules (not chain declarations) over both tables. */
    public int ruleCount() {
        int n = 0;
        for (Table t : Table.values()) {
            for (Chain c : chains(t)) {
                n += c.rules().size();
            }
        }
        return n;
    }

    /**
     * iptables-restore input for both tables, to be loaded with {@code --noflush}: every declared
     * chain is flushed and refilled, all other chains are left alone. Chains are declared in order,
     * and each chain's rules follow in that same order.
     */
    public String render() {
        StringBuilder sb = new StringBuilder(estimateSize());
        for (Table t : Table.values()) {
            List<Chain> chains = chains(t);
            sb.append('*').append(t.restoreName()).append('\n');
            for (Chain c : chains) {
                sb.append(':').append(c.name()).append(" - [0:0]\n");
            }
            for (Chain c : chains) {
                for (String rule : c.rules()) {
                    sb.append("-A ").append(c.name()).append(' ').append(rule).append('\n');
                }
            }
            sb.append("COMMIT\n");
        }
        return sb.toString();
    }

    private int estimateSize() {
        long size = 64;
        for (Table t : Table.values()) {
            for (Chain c : chains(t)) {
                size += 32 + c.name().length();
                for (String rule : c.rules()) {
                    size += rule.length() + c.name().length() + 5;
                }
            }
        }
        return (int) Math.min(size, Integer.MAX_VALUE - 16);
    }
}
