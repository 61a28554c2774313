package io.rulesync.compiler.iptables;

import static io.rulesync.model.rules.TopChains.MARK_MASQ;

import io.rulesync.compiler.endpoints.EndpointCategories;
import io.rulesync.compiler.endpoints.EndpointInfo;
import io.rulesync.compiler.endpoints.NodeContext;
import io.rulesync.compiler.endpoints.PortEndpoints;
import io.rulesync.compiler.endpoints.ServicePortInfo;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.iptables.Part;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.Target;
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
 * then the EXT, FW, SVC, SVL and SEP chains. Rules are built as typed {@link Rule}s, whose parts check
 * their values, and stored as their {@code iptables-restore} text.
 */
public final class ServicePortCompiler {
    private static final int PRECOMPUTED_PROBABILITIES = 1001;
    private static final Part.Statistic[] PROBABILITIES = new Part.Statistic[PRECOMPUTED_PROBABILITIES];

    static {
        for (int n = 1; n < PRECOMPUTED_PROBABILITIES; n++) {
            PROBABILITIES[n] = new Part.Statistic(computeProbability(n));
        }
    }

    private ServicePortCompiler() {}

    /**
     * kube-proxy's {@code fmt.Sprintf("%0.10f", 1.0/n)}. BigDecimal of the double is its exact
     * binary value, so rounding it to 10 places matches Go's correctly rounded output.
     */
    static Part.Statistic probability(int n) {
        return n < PRECOMPUTED_PROBABILITIES ? PROBABILITIES[n] : new Part.Statistic(computeProbability(n));
    }

    private static String computeProbability(int n) {
        return new BigDecimal(1.0 / n).setScale(10, RoundingMode.HALF_EVEN).toPlainString();
    }

    public static ServicePortRules compile(
            ServicePortInfo svc,
            PortEndpoints endpoints,
            NodeContext node,
            ProxySettings settings,
            boolean largeClusterMode) {
        List<EndpointInfo> allEndpoints = endpoints.forNode(node.name());
        String name = svc.name().toString();
        Protocol proto = svc.name().protocol();
        String hash = ChainNames.portHash(svc.name());
        String svcChain = ServiceChain.SVC.named(hash);
        String svlChain = ServiceChain.SVL.named(hash);
        String extChain = ServiceChain.EXT.named(hash);
        String fwChain = ServiceChain.FW.named(hash);
        Optional<Cidr> detector = settings.localDetector();
        int port = svc.port();

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
        boolean usesFwChain = hasEndpoints
                && !svc.loadBalancerVIPs().isEmpty()
                && !svc.loadBalancerSourceRanges().isEmpty();
        String loadBalancerChain = usesFwChain ? fwChain : extChain;

        Target internalFilterTarget = null;
        String internalFilterComment = null;
        Target externalFilterTarget = null;
        String externalFilterComment = null;
        if (!hasEndpoints) {
            internalFilterTarget = new Target.Reject();
            internalFilterComment = name + " has no endpoints";
            externalFilterTarget = internalFilterTarget;
            externalFilterComment = internalFilterComment;
        } else {
            if (!hasInternalEndpoints) {
                internalFilterTarget = Target.Verdict.DROP;
                internalFilterComment = name + " has no local endpoints";
            }
            if (!hasExternalEndpoints) {
                externalFilterTarget = Target.Verdict.DROP;
                externalFilterComment = name + " has no local endpoints";
            }
        }

        Map<DispatchChain, List<String>> dispatch = new EnumMap<>(DispatchChain.class);

        // Capture the cluster IP.
        if (hasInternalEndpoints) {
            add(
                    dispatch,
                    DispatchChain.NAT_SERVICES,
                    destination(Rule.with().comment(name + " cluster IP"), proto, svc.clusterIP(), port)
                            .jump(internalChain));
        } else {
            add(
                    dispatch,
                    DispatchChain.FILTER_SERVICES,
                    destination(Rule.with().comment(internalFilterComment), proto, svc.clusterIP(), port)
                            .then(internalFilterTarget));
        }

        // Capture external IPs.
        for (IpAddress externalIP : svc.externalIPs()) {
            if (hasEndpoints) {
                add(
                        dispatch,
                        DispatchChain.NAT_SERVICES,
                        destination(Rule.with().comment(name + " external IP"), proto, externalIP, port)
                                .jump(extChain));
            }
            if (!hasExternalEndpoints) {
                add(
                        dispatch,
                        DispatchChain.FILTER_EXTERNAL_SERVICES,
                        destination(Rule.with().comment(externalFilterComment), proto, externalIP, port)
                                .then(externalFilterTarget));
            }
        }

        // Capture load-balancer ingress.
        for (IpAddress vip : svc.loadBalancerVIPs()) {
            if (hasEndpoints) {
                add(
                        dispatch,
                        DispatchChain.NAT_SERVICES,
                        destination(Rule.with().comment(name + " loadbalancer IP"), proto, vip, port)
                                .jump(loadBalancerChain));
            }
            if (usesFwChain) {
                add(
                        dispatch,
                        DispatchChain.FILTER_PROXY_FIREWALL,
                        destination(Rule.with().comment(name + " traffic not accepted by " + fwChain), proto, vip, port)
                                .then(Target.Verdict.DROP));
            }
        }
        if (!hasExternalEndpoints) {
            for (IpAddress vip : svc.loadBalancerVIPs()) {
                add(
                        dispatch,
                        DispatchChain.FILTER_EXTERNAL_SERVICES,
                        destination(Rule.with().comment(externalFilterComment), proto, vip, port)
                                .then(externalFilterTarget));
            }
        }

        // Capture node ports; they are not subject to loadBalancerSourceRanges.
        if (svc.nodePort() != 0) {
            if (hasEndpoints) {
                add(
                        dispatch,
                        DispatchChain.NAT_NODEPORTS,
                        Rule.with()
                                .bareComment(name)
                                .protocol(proto)
                                .destinationPort(svc.nodePort())
                                .jump(extChain));
            }
            if (!hasExternalEndpoints) {
                add(
                        dispatch,
                        DispatchChain.FILTER_EXTERNAL_SERVICES,
                        Rule.with()
                                .comment(externalFilterComment)
                                .local(false)
                                .protocol(proto)
                                .destinationPort(svc.nodePort())
                                .then(externalFilterTarget));
            }
        }

        // Accept health-check node ports whether or not this node has local endpoints.
        if (svc.healthCheckNodePort() != 0) {
            add(
                    dispatch,
                    DispatchChain.FILTER_NODEPORTS,
                    Rule.with()
                            .comment(name + " health check node port")
                            .protocol(Protocol.TCP)
                            .destinationPort(svc.healthCheckNodePort())
                            .then(Target.Verdict.ACCEPT));
        }

        Chains chains = new Chains();

        // Masquerade off-cluster traffic to the cluster IP (or all of it, with --masquerade-all).
        if (hasInternalEndpoints && (settings.masqueradeAll() || detector.isPresent())) {
            Rule.Builder rule = destination(Rule.with().comment(name + " cluster IP"), proto, svc.clusterIP(), port);
            if (!settings.masqueradeAll()) {
                rule.source(true, detector.get());
            }
            chains.rule(internalChain, rule.jump(MARK_MASQ));
        }

        if (usesExternalChain) {
            chains.declare(extChain);
            if (!svc.externalPolicyLocal()) {
                // Non-local endpoints may be on another node: masquerade so replies come back here.
                chains.rule(
                        extChain,
                        Rule.with()
                                .comment("masquerade traffic for " + name + " external destinations")
                                .jump(MARK_MASQ));
            } else {
                if (detector.isPresent()) {
                    // Pods reaching an external address of the service behave as if going out and
                    // back in through a load balancer: no traffic policy applies.
                    chains.rule(
                            extChain,
                            Rule.with()
                                    .comment("pod traffic for " + name + " external destinations")
                                    .source(false, detector.get())
                                    .jump(svcChain));
                }
                // Traffic from the node itself has a local source address, so it must be masqueraded
                // and may go to any endpoint.
                chains.rule(
                        extChain,
                        Rule.with()
                                .comment("masquerade LOCAL traffic for " + name + " external destinations")
                                .local(true)
                                .jump(MARK_MASQ));
                chains.rule(
                        extChain,
                        Rule.with()
                                .comment("route LOCAL traffic for " + name + " external destinations")
                                .local(true)
                                .jump(svcChain));
            }
            if (hasExternalEndpoints) {
                chains.rule(extChain, Rule.with().jump(externalPolicyChain));
            }
        }

        if (usesFwChain) {
            chains.declare(fwChain);
            String comment = name + " loadbalancer IP";
            boolean allowFromNode = false;
            for (Cidr cidr : svc.loadBalancerSourceRanges()) {
                chains.rule(
                        fwChain,
                        Rule.with().comment(comment).source(false, cidr).jump(extChain));
                if (node.primaryIP().isPresent()
                        && cidr.contains(node.primaryIP().get())) {
                    allowFromNode = true;
                }
            }
            // A VIP that is also a local address loops requests from this node back with the VIP as
            // source, so those are allowed too when the node itself is allowed.
            if (allowFromNode) {
                for (IpAddress vip : svc.loadBalancerVIPs()) {
                    chains.rule(
                            fwChain, Rule.with().comment(comment).source(vip).jump(extChain));
                }
            }
            // Falling off the end means no DNAT; KUBE-PROXY-FIREWALL then drops the packet.
            chains.rule(
                    fwChain,
                    Rule.with()
                            .comment("other traffic to " + name + " will be dropped by KUBE-PROXY-FIREWALL")
                            .noTarget());
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
            // Traffic that a pod sends to its own service and that comes back to it (hairpin).
            chains.rule(
                    sep,
                    commented(largeClusterMode, name, false).source(ep.ip()).jump(MARK_MASQ));
            Rule.Builder dnat = commented(largeClusterMode, name, false);
            if (svc.sessionAffinity()) {
                dnat.add(Part.Recent.remember(sep));
            }
            chains.rule(sep, dnat.protocol(proto).then(new Target.Dnat(ep.ip(), ep.port())));
        }

        return new ServicePortRules(
                svc.name(), allEndpoints.size(), new RuleFragment(dispatch, List.of(), chains.build()));
    }

    private static void writeServiceToEndpointRules(
            Chains chains,
            String name,
            ServicePortInfo svc,
            String chain,
            List<EndpointInfo> endpoints,
            boolean largeClusterMode) {
        List<String> sepChains = new ArrayList<>(endpoints.size());
        for (EndpointInfo ep : endpoints) {
            sepChains.add(ChainNames.endpointChain(svc.name(), ep.text()));
        }
        if (svc.sessionAffinity()) {
            for (int i = 0; i < endpoints.size(); i++) {
                String sep = sepChains.get(i);
                chains.rule(
                        chain,
                        commented(
                                        largeClusterMode,
                                        name + " -> " + endpoints.get(i).text(),
                                        true)
                                .add(Part.Recent.check(sep, svc.affinityTimeoutSeconds()))
                                .jump(sep));
            }
        }
        int n = endpoints.size();
        for (int i = 0; i < n; i++) {
            Rule.Builder rule =
                    commented(largeClusterMode, name + " -> " + endpoints.get(i).text(), true);
            // Rule i matches with probability 1/(n-i) of what is left, so each endpoint gets 1/n;
            // the last rule always matches.
            if (i < n - 1) {
                rule.add(probability(n - i));
            }
            chains.rule(chain, rule.jump(sepChains.get(i)));
        }
    }

    /** kube-proxy's match order for a service address: {@code -m tcp -p tcp -d IP --dport PORT}. */
    private static Rule.Builder destination(Rule.Builder rule, Protocol proto, IpAddress ip, int port) {
        return rule.protocol(proto).destination(ip).destinationPort(port);
    }

    /** A rule with kube-proxy's comment, which it leaves out of endpoint rules in large clusters to save memory. */
    private static Rule.Builder commented(boolean largeClusterMode, String comment, boolean quoted) {
        Rule.Builder rule = Rule.with();
        if (!largeClusterMode) {
            rule = quoted ? rule.comment(comment) : rule.bareComment(comment);
        }
        return rule;
    }

    private static void add(Map<DispatchChain, List<String>> dispatch, DispatchChain chain, Rule rule) {
        dispatch.computeIfAbsent(chain, k -> new ArrayList<>()).add(rule.restoreForm());
    }

    /** Owned chains in declaration order, with their rules. */
    private static final class Chains {
        private final Map<String, List<String>> rules = new LinkedHashMap<>();
        private final List<String> declared = new ArrayList<>();

        void declare(String chain) {
            declared.add(chain);
            rules.computeIfAbsent(chain, k -> new ArrayList<>());
        }

        void rule(String chain, Rule rule) {
            rules.computeIfAbsent(chain, k -> new ArrayList<>()).add(rule.restoreForm());
        }

        List<Chain> build() {
            if (rules.size() != declared.size()) {
                throw new IllegalStateException(
                        "rules written to undeclared chains: " + rules.keySet() + " vs " + declared);
            }
            List<Chain> out = new ArrayList<>(declared.size());
            for (String name : declared) {
                out.add(new Chain(name, rules.get(name)));
            }
            return out;
        }
    }
}
