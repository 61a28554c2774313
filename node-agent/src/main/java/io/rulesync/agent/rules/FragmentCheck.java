package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Table;
import java.util.Map;

/**
 * Checks a fragment as it arrives, before any of it can reach the kernel: its own chains and the
 * rules it adds to the dispatch chains. Checking what a delta carries costs what the change costs;
 * a whole rule set is checked only when a snapshot is loaded.
 */
public final class FragmentCheck {
    private FragmentCheck() {}

    /** @throws RejectedRuleException naming table, chain, rule number and the offending part */
    public static void check(IpFamily family, RuleFragment fragment) {
        for (Table t : Table.values()) {
            for (Chain c : fragment.chains(t)) {
                RuleGrammar.check(t, family, c);
            }
        }
        for (DispatchChain d : DispatchChain.values()) {
            int n = 0;
            for (String rule : fragment.appended(d)) {
                n++;
                try {
                    RuleGrammar.parse(d.table(), family, d.chain(), rule);
                } catch (RejectedRuleException e) {
                    throw new RejectedRuleException(d.table(), d.chain(), n, e.problem());
                }
            }
        }
    }

    /** Why a delta must not reach the kernel, or null: every fragment it carries must be one the compiler emits. */
    public static String refusal(RulesDiff diff) {
        for (RulesDiff.FragmentChange c : diff.fragments()) {
            String r = c.after() == null ? null : refusal(c.key(), c.after());
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    /** Why a whole version (its fragments) must not reach the kernel, or null. */
    public static String refusal(Map<FragmentKey, RuleFragment> fragments) {
        for (Map.Entry<FragmentKey, RuleFragment> e : fragments.entrySet()) {
            String r = refusal(e.getKey(), e.getValue());
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    private static String refusal(FragmentKey key, RuleFragment f) {
        try {
            check(key.family(), f);
            return null;
        } catch (RejectedRuleException e) {
            return "refused " + key.unit().id() + " (" + key.family().id() + "): " + e.getMessage();
        }
    }
}
