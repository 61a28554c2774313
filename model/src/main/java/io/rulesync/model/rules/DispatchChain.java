package io.rulesync.model.rules;

/**
 * The shared top-level chains that many units add rules to. Their content is the concatenation of
 * every service port's contribution (in port order), so a change to one port edits only its own
 * rules there.
 */
public enum DispatchChain {
    FILTER_SERVICES(Table.FILTER, TopChains.SERVICES),
    FILTER_EXTERNAL_SERVICES(Table.FILTER, TopChains.EXTERNAL_SERVICES),
    FILTER_NODEPORTS(Table.FILTER, TopChains.NODEPORTS),
    FILTER_PROXY_FIREWALL(Table.FILTER, TopChains.PROXY_FIREWALL),
    NAT_SERVICES(Table.NAT, TopChains.SERVICES),
    NAT_NODEPORTS(Table.NAT, TopChains.NODEPORTS);

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

    public static DispatchChain of(Table table, String chain) {
        for (DispatchChain d : values()) {
            if (d.table == table && d.chain.equals(chain)) {
                return d;
            }
        }
        return null;
    }
}
