package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.iptables.Part;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.iptables.Rule;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import io.rulesync.model.rules.Table;
import io.rulesync.model.text.Printable;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The gate in front of {@code iptables-restore} for IPVS mode's rules: each must read, in the model's
 * {@link RuleGrammar} (its IPVS dialect), as a typed rule in one of IPVS mode's own chains, and its
 * comments and set names must be kube-proxy's for that family. So no word reaches the kernel that
 * the compiler could not have built, and nothing can end a line or a quoted word early.
 */
public final class IpvsRuleCheck {
    /** kube-proxy's dummy device for the Services' addresses (BoundAddresses.DEVICE). */
    private static final String IPVS_DEVICE = "kube-ipvs0";

    private static final Set<String> FIXED_COMMENTS = Set.of(
            "kubernetes service traffic requiring SNAT",
            "kubernetes forwarding rules",
            "kubernetes forwarding conntrack rule");

    private IpvsRuleCheck() {}

    /** Checks every iptables rule of an IPVS configuration; throws naming the first that is not kube-proxy's. */
    public static void check(IpvsRules rules) throws RejectedRuleException {
        Set<String> sets = new HashSet<>();
        Set<String> comments = new HashSet<>(FIXED_COMMENTS);
        for (IpvsSet s : IpvsSet.values()) {
            sets.add(s.name(rules.family()));
            comments.add(s.comment());
        }
        for (String r : rules.natRules()) {
            check(r, Table.NAT, rules.family(), sets, comments);
        }
        for (String r : rules.filterRules()) {
            check(r, Table.FILTER, rules.family(), sets, comments);
        }
    }

    private static void check(String line, Table table, IpFamily family, Set<String> sets, Set<String> comments)
            throws RejectedRuleException {
        int space = line.indexOf(' ', 3);
        if (!line.startsWith("-A ") || space < 0) {
            throw new RejectedRuleException(
                    table, "(none)", 0, "IPVS rule '" + Printable.shown(line) + "': not -A CHAIN RULE");
        }
        String chain = line.substring(3, space);
        Rule rule = RuleGrammar.parse(RuleGrammar.Dialect.IPVS, table, family, chain, line.substring(space + 1));
        for (Part p : rule.parts()) {
            if (p instanceof Part.Comment c && !comments.contains(c.text())) {
                throw new RejectedRuleException(
                        table, chain, 0, "--comment " + Printable.quoted(c.text()) + " is not one of IPVS mode's");
            }
            if (p instanceof Part.SetMatch m && !sets.contains(m.name())) {
                throw new RejectedRuleException(
                        table,
                        chain,
                        0,
                        "--match-set " + m.name() + " is not one of IPVS mode's " + family.id() + " sets");
            }
        }
    }

    /**
     * Why the addresses of an IPVS configuration must not reach the kernel, or empty: a real server
     * (an endpoint) or an address bound to {@code kube-ipvs0} (a ClusterIP, external or load-balancer
     * IP) in a special range ({@link SpecialRange}) would send traffic to the node itself or take it
     * over from the node (bound at 169.254.169.254, the node would answer for the metadata service).
     * Virtual servers at addresses not bound are the NodePort ones on the node's own addresses, which
     * the API server does not validate and kube-proxy uses as the node has them; they are not checked.
     */
    public static Optional<String> addressRefusal(IpvsRules rules) {
        for (IpAddress ip : rules.bound()) {
            Optional<String> why = special(ip);
            if (why.isPresent()) {
                return Optional.of("address " + ip + " on " + IPVS_DEVICE + ": " + why.get()
                        + " (a Service's address there would take traffic meant for the node itself)");
            }
        }
        for (VirtualServer vs : rules.virtualServers()) {
            for (RealServer rs : vs.realServers()) {
                Optional<String> why = special(rs.address());
                if (why.isPresent()) {
                    return Optional.of("real server " + rs.text() + " of " + vs.key() + ": " + why.get()
                            + " (the API server refuses it as an endpoint)");
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<String> special(IpAddress ip) {
        return SpecialRange.refusal(ip).map(why -> ip + " " + why);
    }
}
