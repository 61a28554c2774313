package io.rulesync.compiler.iptables;

import io.rulesync.compiler.endpoints.ServicePortInfo;
import io.rulesync.compiler.endpoints.EndpointInfo;
import io.rulesync.compiler.endpoints.EndpointCategories;
import io.rulesync.compiler.endpoints.PortEndpoints;
import io.rulesync.compiler.endpoints.NodeContext;
import static io.rulesync.model.rules.TopChains.MARK_MASQ;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.ServiceChain;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Writes the rules of one service port exactly as kube-proxy's {@code syncProxyRules} loop body
 * (v1.30) does: capture rules in the dispatch chains, REJECT/DROP rules when endpoints are missing,
 * then the EXT, FW, SVC, SVL and SEP chains. Every string placed in a rule comes from a validated
 * model value (Kubernetes names, canonical IPs, numbers), never from raw input.
 */
public final class ServicePortCompiler {
    private static final int PRECOMPUTED_PROBABILITIES = 1001;
    private static final String[] PROBABILITIES = new String[PRECOMPUTED_PROBABILITIES];

    static {
        for (int n = 1; n < PRECOMPUTED_PROBABILITIES; n++) {
            PROBABILITIES[n] = computeProbability(n);
        }
    }

    private ServicePortCompiler() {
    }

    /**
     * kube-proxy's {@code fmt.Sprintf("%0.10f", 1.0/n)}. BigDecimal of the double is its exact
     * binary value, so rounding it to 10 places matches Go's correctly rounded output.
     */
    static String probability(int n) {
        return n < PRECOMPUTED_PROBABILITIES ? PROBABILITIES[n] : computeProbability(n);
    }

    private static String computeProbability(int n) {
        return new BigDecimal(1.0 / n).setScale(10, RoundingMode.HALF_EVEN).toPlainString();
    }

    public static ServicePortRules compile(
            ServicePortInfo svc, PortEndpoints endpoints, NodeContext node, ProxySettings settings,
            boolean largeClusterMode) {
        List<EndpointInfo> allEndpoints = endpoints.forNode(node.name());
        String name = svc.name().toString();
        String proto = svc.name().protocol().lower();
        String hash = ChainNames.portHash(svc.name());
        String svcChain = ServiceChain.SVC.named(hash);
        String svlChain = ServiceChain.SVL.named(hash);
        String extChain = ServiceChain.EXT.named(hash);
        String fwChain = ServiceChain.FW.named(hash);
        Optional<Cidr> detector = settings.localDetector();
        String port = Integer.toString(svc.port());

        EndpointCategories eps = EndpointCategories.categorize(allEndpoints, svc, node.name(), node.zone());
        boolean usesClusterPolicyChain = !eps.cluster().isEmpty() && svc.usesClusterEndpoints();
        boolean usesLocalPolicyChain = !eps.local().isEmpty() && svc.usesLocalEndpoints();
        boolean hasEndpoints = eps.hasAny();

        String internalChain = svcChain;
        boolean hasInternalEndpoints = hasEndpoints;
        if (svc.internalPolicyLocal()) {
            internalChain = svlChain;
            hasInternalEndpoints = !eps.local().isEmpty();
        }
        String externalPolicyChain = svcChain;
        boolean hasExternalEndpoints = hasEndpoints;
        if (svc.externalPolicyLocal()) {
            externalPolicyChain = svlChain;
            hasExternalEndpoints = !eps.local().isEmpty();
        }
        // Based on hasEndpoints, not hasExternalEndpoints: the short-circuit rules for local
        // traffic are needed even when no endpoint takes external traffic.
        boolean usesExternalChain = hasEndpoints && svc.externallyAccessible();
        boolean usesFwChain = hasEndpoints && !svc.loadBalancerVIPs().isEmpty()
                && !svc.loadBalancerSourceRanges().isEmpty();
        String loadBalancerChain = usesFwChain ? fwChain : extChain;

        String internalFilterTarget = null;
        String internalFilterComment = null;
        String externalFilterTarget = null;
        String externalFilterComment = null;
        if (!hasEndpoints) {
            internalFilterTarget = "REJECT";
            internalFilterComment = quote(name + " has no endpoints");
            externalFilterTarget = "REJECT";
            externalFilterComment = internalFilterComment;
        } else {
            if (!hasInternalEndpoints) {
                internalFilterTarget = "DROP";
                internalFilterComment = quote(name + " has no local endpoints");
            }
            if (!hasExternalEndpoints) {
                externalFilterTarget = "DROP";
                externalFilterComment = quote(name + " has no local endpoints");
            }
        }

        Map<DispatchChain, List<String>> dispatch = new EnumMap<>(DispatchChain.class);
        String clusterIPMatch = destination(proto, svc.clusterIP(), port);

        // Capture the cluster IP.
        if (hasInternalEndpoints) {
            add(dispatch, DispatchChain.NAT_SERVICES,
                    comment(quote(name + " cluster IP")) + clusterIPMatch + " -j " + internalChain);
        } else {
            add(dispatch, DispatchChain.FILTER_SERVICES,
                    comment(internalFilterComment) + clusterIPMatch + " -j " + internalFilterTarget);
        }

        // Capture external IPs.
        for (IpAddress externalIP : svc.externalIPs()) {
            String match = destination(proto, externalIP, port);
            if (hasEndpoints) {
                add(dispatch, DispatchChain.NAT_SERVICES,
                        comment(quote(name + " external IP")) + match + " -j " + extChain);
            }
            if (!hasExternalEndpoints) {
                add(dispatch, DispatchChain.FILTER_EXTERNAL_SERVICES,
                        comment(externalFilterComment) + match + " -j " + externalFilterTarget);
            }
        }

        // Capture load-balancer ingress.
        for (IpAddress vip : svc.loadBalancerVIPs()) {
            String match = destination(proto, vip, port);
            if (hasEndpoints) {
                add(dispatch, DispatchChain.NAT_SERVICES,
                        comment(quote(name + " loadbalancer IP")) + match + " -j " + loadBalancerChain);
            }
            if (usesFwChain) {
                add(dispatch, DispatchChain.FILTER_PROXY_FIREWALL,
                        comment(quote(name + " traffic not accepted by " + fwChain)) + match + " -j DROP");
            }
        }
        if (!hasExternalEndpoints) {
            for (IpAddress vip : svc.loadBalancerVIPs()) {
                add(dispatch, DispatchChain.FILTER_EXTERNAL_SERVICES, comment(externalFilterComment)
                        + destination(proto, vip, port) + " -j " + externalFilterTarget);
            }
        }

        // Capture node ports; they are not subject to loadBalancerSourceRanges.
        if (svc.nodePort() != 0) {
            String nodePortMatch = "-m " + proto + " -p " + proto + " --dport " + svc.nodePort();
            if (hasEndpoints) {
                add(dispatch, DispatchChain.NAT_NODEPORTS, comment(name) + nodePortMatch + " -j " + extChain);
            }
            if (!hasExternalEndpoints) {
                add(dispatch, DispatchChain.FILTER_EXTERNAL_SERVICES, comment(externalFilterComment)
                        + "-m addrtype --dst-type LOCAL " + nodePortMatch + " -j " + externalFilterTarget);
            }
        }

        // Accept health-check node ports whether or not this node has local endpoints.
        if (svc.healthCheckNodePort() != 0) {
            add(dispatch, DispatchChain.FILTER_NODEPORTS, comment(quote(name + " health check node port"))
                    + "-m tcp -p tcp --dport " + svc.healthCheckNodePort() + " -j ACCEPT");
        }

        Chains chains = new Chains();

        // Masquerade off-cluster traffic to the cluster IP (or all of it, with --masquerade-all).
        if (hasInternalEndpoints) {
            String args = comment(quote(name + " cluster IP")) + clusterIPMatch;
            if (settings.masqueradeAll()) {
                chains.rule(internalChain, args + " -j " + MARK_MASQ);
            } else if (detector.isPresent()) {
                chains.rule(internalChain, args + " ! -s " + detector.get() + " -j " + MARK_MASQ);
            }
        }

        if (usesExternalChain) {
            chains.declare(extChain);
            if (!svc.externalPolicyLocal()) {
                // Non-local endpoints may be on another node: masquerade so replies come back here.
                chains.rule(extChain, comment(quote("masquerade traffic for " + name + " external destinations"))
                        + "-j " + MARK_MASQ);
            } else {
                if (detector.isPresent()) {
                    // Pods reaching an external address of the service behave as if going out and
                    // back in through a load balancer: no traffic policy applies.
                    chains.rule(extChain, comment(quote("pod traffic for " + name + " external destinations"))
                            + "-s " + detector.get() + " -j " + svcChain);
                }
                // Traffic from the node itself has a local source address, so it must be masqueraded
                // and may go to any endpoint.
                chains.rule(extChain, comment(quote("masquerade LOCAL traffic for " + name + " external destinations"))
                        + "-m addrtype --src-type LOCAL -j " + MARK_MASQ);
                chains.rule(extChain, comment(quote("route LOCAL traffic for " + name + " external destinations"))
                        + "-m addrtype --src-type LOCAL -j " + svcChain);
            }
            if (hasExternalEndpoints) {
                chains.rule(extChain, "-j " + externalPolicyChain);
            }
        }

        if (usesFwChain) {
            chains.declare(fwChain);
            String args = comment(quote(name + " loadbalancer IP"));
            boolean allowFromNode = false;
            for (Cidr cidr : svc.loadBalancerSourceRanges()) {
                chains.rule(fwChain, args + "-s " + cidr + " -j " + extChain);
                if (node.primaryIP().isPresent() && cidr.contains(node.primaryIP().get())) {
                    allowFromNode = true;
                }
            }
            // A VIP that is also a local address loops requests from this node back with the VIP as
            // source, so those are allowed too when the node itself is allowed.
            if (allowFromNode) {
                for (IpAddress vip : svc.loadBalancerVIPs()) {
                    chains.rule(fwChain, args + "-s " + vip + " -j " + extChain);
                }
            }
            // Falling off the end means no DNAT; KUBE-PROXY-FIREWALL then drops the packet.
            chains.rule(fwChain, comment(quote("other traffic to " + name + " will be dropped by KUBE-PROXY-FIREWALL")).strip());
        }

        if (usesClusterPolicyChain) {
            chains.declare(svcChain);
            writeServiceToEndpointRules(chains, name, svc, svcChain, eps.cluster(), largeClusterMode);
        }
        if (usesLocalPolicyChain) {
            chains.declare(svlChain);
            writeServiceToEndpointRules(chains, name, svc, svlChain, eps.local(), largeClusterMode);
        }

        for (EndpointInfo ep : eps.allReachable()) {
            String sep = ChainNames.endpointChain(svc.name(), ep.text());
            chains.declare(sep);
            String args = largeClusterMode ? "" : comment(name);
            // Traffic that a pod sends to its own service and that comes back to it (hairpin).
            chains.rule(sep, args + "-s " + ep.ip() + " -j " + MARK_MASQ);
            String affinity = svc.sessionAffinity() ? "-m recent --name " + sep + " --set " : "";
            chains.rule(sep, args + affinity + "-m " + proto + " -p " + proto + " -j DNAT --to-destination " + ep.text());
        }

        return new ServicePortRules(svc.name(), allEndpoints.size(), new RuleFragment(dispatch, List.of(), chains.build()));
    }

    private static void writeServiceToEndpointRules(
            Chains chains, String name, ServicePortInfo svc, String chain, List<EndpointInfo> endpoints,
            boolean largeClusterMode) {
        List<String> sepChains = new ArrayList<>(endpoints.size());
        for (EndpointInfo ep : endpoints) {
            sepChains.add(ChainNames.endpointChain(svc.name(), ep.text()));
        }
        if (svc.sessionAffinity()) {
            for (int i = 0; i < endpoints.size(); i++) {
                String sep = sepChains.get(i);
                String args = largeClusterMode ? "" : comment(quote(name + " -> " + endpoints.get(i).text()));
                chains.rule(chain, args + "-m recent --name " + sep + " --rcheck --seconds "
                        + svc.affinityTimeoutSeconds() + " --reap -j " + sep);
            }
        }
        int n = endpoints.size();
        for (int i = 0; i < n; i++) {
            String args = largeClusterMode ? "" : comment(quote(name + " -> " + endpoints.get(i).text()));
            // Rule i matches with probability 1/(n-i) of what is left, so each endpoint gets 1/n;
            // the last rule always matches.
            String statistic = i < n - 1 ? "-m statistic --mode random --probability " + probability(n - i) + " " : "";
            chains.rule(chain, args + statistic + "-j " + sepChains.get(i));
        }
    }

    /** kube-proxy's match order for a service address: {@code -m tcp -p tcp -d IP --dport PORT}. */
    private static String destination(String proto, IpAddress ip, String port) {
        return "-m " + proto + " -p " + proto + " -d " + ip + " --dport " + port;
    }

    private static String quote(String s) {
        return "\"" + s + "\"";
    }

    /** {@code -m comment --comment X } with a trailing space, ready for the next match. */
    private static String comment(String text) {
        return "-m comment --comment " + text + " ";
    }

    private static void add(Map<DispatchChain, List<String>> dispatch, DispatchChain chain, String rule) {
        dispatch.computeIfAbsent(chain, k -> new ArrayList<>()).add(rule);
    }

    /** Owned chains in declaration order, with their rules. */
    private static final class Chains {
        private final Map<String, List<String>> rules = new LinkedHashMap<>();
        private final List<String> declared = new ArrayList<>();

        void declare(String chain) {
            declared.add(chain);
            rules.computeIfAbsent(chain, k -> new ArrayList<>());
        }

        void rule(String chain, String rule) {
            rules.computeIfAbsent(chain, k -> new ArrayList<>()).add(rule);
        }

        List<Chain> build() {
            if (rules.size() != declared.size()) {
                throw new IllegalStateException("rules written to undeclared chains: " + rules.keySet() + " vs " + declared);
            }
            List<Chain> out = new ArrayList<>(declared.size());
            for (String name : declared) {
                out.add(new Chain(name, rules.get(name)));
            }
            return out;
        }
    }
}
