package io.rulesync.model.rules;

import java.util.List;

/**
 * kube-proxy's fixed chain names and the order in which it declares them: these names are what
 * operators' tools and runbooks know, so rulesync owns exactly these (plus the per-service chains,
 * see {@link ServiceChain}).
 */
public final class TopChains {
    public static final String SERVICES = "KUBE-SERVICES";
    public static final String EXTERNAL_SERVICES = "KUBE-EXTERNAL-SERVICES";
    public static final String NODEPORTS = "KUBE-NODEPORTS";
    public static final String POSTROUTING = "KUBE-POSTROUTING";
    public static final String MARK_MASQ = "KUBE-MARK-MASQ";
    public static final String FORWARD = "KUBE-FORWARD";
    public static final String PROXY_FIREWALL = "KUBE-PROXY-FIREWALL";
    public static final String FIREWALL = "KUBE-FIREWALL";

    /** iptables refuses a chain name of XT_EXTENSION_MAXNAMELEN (29, with the NUL) or more characters. */
    public static final int MAX_NAME_LENGTH = 28;

    /** filter chains in kube-proxy's declaration order (KUBE-FIREWALL only where it is written). */
    static final List<String> FILTER_ORDER =
            List.of(SERVICES, EXTERNAL_SERVICES, FORWARD, NODEPORTS, PROXY_FIREWALL, FIREWALL);
    /** The nat chains declared before any per-service chain. */
    static final List<String> NAT_ORDER = List.of(SERVICES, NODEPORTS, POSTROUTING, MARK_MASQ);

    private TopChains() {}

    /** The fixed chains of {@code table}, in kube-proxy's declaration order. */
    public static List<String> of(Table table) {
        return table == Table.FILTER ? FILTER_ORDER : NAT_ORDER;
    }
}
