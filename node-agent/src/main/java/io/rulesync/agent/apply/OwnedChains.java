package io.rulesync.agent.apply;

import io.rulesync.model.rules.TopChains;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The chains rulesync owns on a node: exactly those kube-proxy would own (its fixed chains, the
 * per-Service chains, its canary). Anything else in the kernel belongs to someone else and is
 * never named in a restore.
 */
public final class OwnedChains {
    /** kube-proxy's canary chain: if it is gone, someone flushed the table and a full apply is due. */
    public static final String CANARY = "KUBE-PROXY-CANARY";

    private static final Set<String> FIXED = Set.of(TopChains.SERVICES, TopChains.EXTERNAL_SERVICES, TopChains.NODEPORTS,
            TopChains.POSTROUTING, TopChains.MARK_MASQ, TopChains.FORWARD, TopChains.PROXY_FIREWALL, TopChains.FIREWALL, CANARY);
    private static final Pattern PER_SERVICE = Pattern.compile("KUBE-(SVC|SVL|EXT|FW|SEP)-[A-Z2-7]{16}");

    private OwnedChains() {
    }

    public static boolean owns(String chain) {
        return FIXED.contains(chain) || PER_SERVICE.matcher(chain).matches();
    }
}
