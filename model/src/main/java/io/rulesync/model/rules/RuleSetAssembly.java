package io.rulesync.model.rules;

import io.rulesync.model.cluster.IpFamily;
import java.util.ArrayList;
import java.util.List;

/**
 * Puts a node's rule set together from fragments: the fixed part and one fragment per service port,
 * in port order. kube-proxy's declaration order is kept: the fixed chains first, then every port's
 * own chains. Each dispatch chain holds the ports' rules in port order, followed by the fixed part's
 * (the "must be the last rule" NodePort jump).
 *
 * <p>The compiler renders with this, and so do the roles that render from storage (agent, api), so a
 * stored version always reads back byte for byte as it was compiled.
 */
public final class RuleSetAssembly {
    private RuleSetAssembly() {}

    public static RuleSet assemble(IpFamily family, RuleFragment fixed, Iterable<RuleFragment> ports) {
        List<Chain> filter = new ArrayList<>();
        for (String name : TopChains.FILTER_ORDER) {
            Chain c = chain(Table.FILTER, name, fixed, ports);
            if (c != null) {
                filter.add(c);
            }
        }
        List<Chain> nat = new ArrayList<>();
        for (String name : TopChains.NAT_ORDER) {
            Chain c = chain(Table.NAT, name, fixed, ports);
            if (c != null) {
                nat.add(c);
            }
        }
        for (RuleFragment p : ports) {
            nat.addAll(p.natChains());
        }
        return new RuleSet(family, filter, nat);
    }

    /** A top-level chain: owned by the fixed part, or a dispatch chain (always declared), or absent. */
    private static Chain chain(Table table, String name, RuleFragment fixed, Iterable<RuleFragment> ports) {
        for (Chain c : fixed.chains(table)) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        DispatchChain d = DispatchChain.of(table, name);
        if (d == null) {
            return null;
        }
        List<String> rules = new ArrayList<>();
        for (RuleFragment p : ports) {
            rules.addAll(p.appended(d));
        }
        rules.addAll(fixed.appended(d));
        return new Chain(name, rules);
    }
}
