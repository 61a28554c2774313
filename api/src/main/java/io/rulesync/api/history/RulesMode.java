package io.rulesync.api.history;

import io.rulesync.api.params.BadValue;
import io.rulesync.model.cluster.KubernetesNames;
import java.util.Locale;

/** {@code ?mode=}: which of a node's rule sets is meant, kube-proxy's iptables mode (the default) or its IPVS mode. */
public enum RulesMode {
    IPTABLES, IPVS;

    public static RulesMode parse(String s) {
        return switch (s) {
            case "iptables" -> IPTABLES;
            case "ipvs" -> IPVS;
            default -> throw new BadValue("'" + KubernetesNames.printable(s) + "' is not iptables or ipvs");
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
