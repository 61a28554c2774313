package io.rulesync.agent.apply;

import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.Table;

/**
 * The chains rulesync owns on a node: exactly those kube-proxy would own (the names the rule
 * grammar accepts, plus kube-proxy's canary). Anything else in the kernel belongs to someone else
 * and is never named in a restore.
 */
public final class OwnedChains {
    /** kube-proxy's canary chain: if it is gone, someone flushed the table and a full apply is due. */
    public static final String CANARY = "KUBE-PROXY-CANARY";

    private OwnedChains() {}

    public static boolean owns(Table table, String chain) {
        if (chain.equals(CANARY)) {
            return true;
        }
        try {
            RuleGrammar.checkChainName(table, chain);
            return true;
        } catch (RejectedRuleException e) {
            return false;
        }
    }
}
