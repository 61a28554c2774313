package io.rulesync.model.iptables;

import io.rulesync.model.rules.Table;
import io.rulesync.model.text.Printable;
import java.util.Objects;

/**
 * A rule or chain name that is not in the grammar of what the compiler emits. The parts are kept as
 * data so that the agent can report them (and its tests can assert on them) without parsing the
 * message.
 */
public final class RejectedRuleException extends IllegalArgumentException {
    private final Table table;
    private final String chain;
    private final int ruleNumber;
    private final String problem;

    /**
     * @param ruleNumber 1-based position of the rule in its chain; 0 when the problem is the chain
     *                   itself or the rule was checked on its own
     */
    public RejectedRuleException(Table table, String chain, int ruleNumber, String problem) {
        super(format(table, chain, ruleNumber, problem));
        this.table = Objects.requireNonNull(table, "table");
        this.chain = Objects.requireNonNull(chain, "chain");
        this.ruleNumber = ruleNumber;
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    public Table table() {
        return table;
    }

    public String chain() {
        return chain;
    }

    /** 1-based; 0 when not about one rule of a chain. */
    public int ruleNumber() {
        return ruleNumber;
    }

    /** What is wrong, naming the offending option or value. */
    public String problem() {
        return problem;
    }

    private static String format(Table table, String chain, int ruleNumber, String problem) {
        return table.restoreName() + " chain " + Printable.shown(chain) + (ruleNumber > 0 ? ": rule " + ruleNumber : "")
                + ": " + problem;
    }
}
