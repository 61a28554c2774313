package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.Chain;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one service port contributes to a node's rules: its rules in the shared dispatch chains
 * and the nat chains it owns outright (KUBE-EXT, KUBE-FW, KUBE-SVC, KUBE-SVL and KUBE-SEP, in the
 * order kube-proxy declares them). A port with no endpoints owns no chains, only filter rules.
 *
 * @param endpointCount all endpoints of the port in this family, whatever their state: kube-proxy's
 *                      measure for "large cluster mode"
 */
public record ServicePortRules(
        ServicePortName name, int endpointCount, Map<DispatchChain, List<String>> dispatch, List<Chain> chains) {

    public ServicePortRules {
        EnumMap<DispatchChain, List<String>> copy = new EnumMap<>(DispatchChain.class);
        dispatch.forEach((k, v) -> {
            if (!v.isEmpty()) {
                copy.put(k, List.copyOf(v));
            }
        });
        dispatch = Collections.unmodifiableMap(copy);
        chains = List.copyOf(chains);
    }

    public List<String> dispatchRules(DispatchChain chain) {
        return dispatch.getOrDefault(chain, List.of());
    }
}
