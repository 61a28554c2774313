package io.rulesync.api.history;

import io.rulesync.api.params.BadValue;
import io.rulesync.model.cluster.KubernetesNames;
import java.util.Locale;

/** {@code ?mode=}: which of a node's rule sets is meant, kube-proxy's iptables mode (the default), its IPVS mode or its nftables mode. */
public enum RulesMode {
    IPTABLES,
    IPVS,
    NFTABLES;

    public static RulesMode parse(String s) {
        return switch (s) {
            case "iptables" -> IPTABLES;
            case "ipvs" -> IPVS;
            case "nftables" -> NFTABLES;
            default -> throw new BadValue("'" + KubernetesNames.printable(s) + "' is not iptables, ipvs or nftables");
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
