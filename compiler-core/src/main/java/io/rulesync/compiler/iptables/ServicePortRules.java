package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.RuleFragment;
import java.util.Objects;

/**
 * Everything one service port contributes to a node's rules: its rules in the shared dispatch chains
 * and the nat chains it owns outright (KUBE-EXT, KUBE-FW, KUBE-SVC, KUBE-SVL and KUBE-SEP, in the
 * order kube-proxy declares them). A port with no endpoints owns no chains, only filter rules.
 *
 * @param endpointCount all endpoints of the port in this family, whatever their state: kube-proxy's
 *                      measure for "large cluster mode"
 */
public record ServicePortRules(ServicePortName name, int endpointCount, RuleFragment rules) {
    public ServicePortRules {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(rules, "rules");
    }
}
