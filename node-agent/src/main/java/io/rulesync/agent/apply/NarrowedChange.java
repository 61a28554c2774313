package io.rulesync.agent.apply;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.Unit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The part of a node's rule sets that can differ between two versions when only some units
 * changed: those units' own chains, plus the dispatch chains when their share of them changed.
 * Planning from this instead of from whole rule sets makes a one-endpoint change cost what it
 * changes, not what the node holds (100,000 chains at 10,000 Services).
 */
public record NarrowedChange(RuleSet before, RuleSet after) {

    public static NarrowedChange of(
            ClusterRules before, ClusterRules after, String node, IpFamily family, Collection<Unit> units) {
        List<Chain> bf = new ArrayList<>();
        List<Chain> bn = new ArrayList<>();
        List<Chain> af = new ArrayList<>();
        List<Chain> an = new ArrayList<>();
        boolean dispatch = false;
        for (Unit u : units) {
            RuleFragment b = before.resolve(node, family, u).orElse(RuleFragment.EMPTY);
            RuleFragment a = after.resolve(node, family, u).orElse(RuleFragment.EMPTY);
            bf.addAll(b.filterChains());
            bn.addAll(b.natChains());
            af.addAll(a.filterChains());
            an.addAll(a.natChains());
            dispatch |= !b.appends().equals(a.appends());
        }
        if (dispatch) {
            addDispatch(before.ruleSet(node, family).orElse(null), bf, bn);
            addDispatch(after.ruleSet(node, family).orElse(null), af, an);
        }
        return new NarrowedChange(new RuleSet(family, bf, bn), new RuleSet(family, af, an));
    }

    private static void addDispatch(RuleSet full, List<Chain> filter, List<Chain> nat) {
        if (full == null) {
            return;
        }
        for (Table t : Table.values()) {
            for (Chain c : full.chains(t)) {
                if (DispatchChain.of(t, c.name()) != null) {
                    (t == Table.FILTER ? filter : nat).add(c);
                }
            }
        }
    }
}
