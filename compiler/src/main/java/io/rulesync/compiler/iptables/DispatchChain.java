package io.rulesync.compiler.iptables;

import io.rulesync.model.rules.Table;

/**
 * The shared top-level chains every service port adds rules to. Their content is the concatenation
 * of all ports' contributions (in port order), so a change to one port edits only its own rules there.
 */
public enum DispatchChain {
    FILTER_SERVICES(Table.FILTER, ChainNames.SERVICES),
    FILTER_EXTERNAL_SERVICES(Table.FILTER, ChainNames.EXTERNAL_SERVICES),
    FILTER_NODEPORTS(Table.FILTER, ChainNames.NODEPORTS),
    FILTER_PROXY_FIREWALL(Table.FILTER, ChainNames.PROXY_FIREWALL),
    NAT_SERVICES(Table.NAT, ChainNames.SERVICES),
    NAT_NODEPORTS(Table.NAT, ChainNames.NODEPORTS);

    private final Table table;
    private final String chain;

    DispatchChain(Table table, String chain) {
        this.table = table;
        this.chain = chain;
    }

    public Table table() {
        return table;
    }

    public String chain() {
        return chain;
    }
}
