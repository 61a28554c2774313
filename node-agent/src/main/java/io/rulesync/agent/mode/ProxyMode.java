package io.rulesync.agent.mode;

import java.util.Locale;

/** What the agent is asked to program: kube-proxy's iptables, IPVS or nftables mode. */
public enum ProxyMode {
    IPTABLES,
    IPVS,
    NFTABLES;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ProxyMode parse(String id) {
        for (ProxyMode m : values()) {
            if (m.id().equals(id)) {
                return m;
            }
        }
        throw new IllegalArgumentException("'" + id + "' is not iptables, ipvs or nftables");
    }
}
