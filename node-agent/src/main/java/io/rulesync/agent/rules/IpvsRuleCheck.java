package io.rulesync.agent.rules;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import io.rulesync.model.ipvs.RealServer;
import io.rulesync.model.ipvs.VirtualServer;
import io.rulesync.model.rules.Table;
import io.rulesync.model.text.Printable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The gate in front of {@code iptables-restore} for IPVS mode's rules. They are a closed set (the
 * ~30 rules of kube-proxy's {@code writeIptablesRules} and one DROP per load-balancer IP), so instead
 * of the full grammar of iptables mode every word must be one that set uses: a known keyword, chain,
 * set name, set flags or comment, or a value that parses as what it stands for (address, CIDR, port,
 * mark). A rule that appends to anything but IPVS mode's own chains is refused, and so is anything
 * that could end a line or a quoted word early.
 */
public final class IpvsRuleCheck {
    private static final Set<String> KEYWORDS = Set.of("-m", "-s", "-p", "-j", "!", "comment", "--comment", "set", "--match-set",
            "physdev", "--physdev-is-in", "addrtype", "--src-type", "--dst-type", "LOCAL", "mark", "--mark", "MARK", "--xor-mark",
            "--or-mark", "conntrack", "--ctstate", "NEW", "RELATED,ESTABLISHED", "ipvs", "--vaddr", "--vproto", "--vport", "RETURN",
            "ACCEPT", "DROP", "REJECT", "MASQUERADE", "--random-fully", "tcp", "udp", "sctp", "KUBE-MARK-MASQ",
            "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-LOAD-BALANCER", "KUBE-NODE-PORT", "dst", "dst,dst", "src,dst", "dst,dst,src");
    private static final Pattern MARK = Pattern.compile("0x[0-9a-f]{1,8}(/0x[0-9a-f]{1,8})?");
    private static final Pattern PORT = Pattern.compile("[1-9][0-9]{0,4}");
    private static final Pattern WORD = Pattern.compile("[A-Za-z0-9.,:/!_-]+");
    /** kube-proxy's dummy device for the Services' addresses (BoundAddresses.DEVICE). */
    private static final String IPVS_DEVICE = "kube-ipvs0";

    private IpvsRuleCheck() {
    }

    /** Checks every iptables rule of an IPVS configuration; throws naming the first that is not kube-proxy's. */
    public static void check(IpvsRules rules) throws RejectedRuleException {
        Set<String> words = new HashSet<>(KEYWORDS);
        Set<String> comments = new HashSet<>(Set.of("kubernetes service traffic requiring SNAT", "kubernetes forwarding rules",
                "kubernetes forwarding conntrack rule"));
        for (IpvsSet s : IpvsSet.values()) {
            words.add(s.name(rules.family()));
            String c = s.quotedComment();
            comments.add(c.substring(1, c.length() - 1));
        }
        for (String r : rules.natRules()) {
            check(r, Table.NAT, IpvsRules.NAT_CHAINS, rules.family(), words, comments);
        }
        for (String r : rules.filterRules()) {
            check(r, Table.FILTER, IpvsRules.FILTER_CHAINS, rules.family(), words, comments);
        }
    }

    private static void check(String rule, Table table, List<String> chains, IpFamily family, Set<String> words, Set<String> comments)
            throws RejectedRuleException {
        List<String> tokens = tokens(table, rule);
        if (tokens.size() < 4 || !tokens.get(0).equals("-A") || !chains.contains(tokens.get(1))) {
            throw rejected(table, tokens.size() > 1 ? tokens.get(1) : "", rule, "does not append to one of " + String.join(", ", chains));
        }
        for (int i = 2; i < tokens.size(); i++) {
            String t = tokens.get(i);
            String before = tokens.get(i - 1);
            boolean ok;
            if (t.startsWith("\"")) {
                ok = before.equals("--comment") && comments.contains(t.substring(1, t.length() - 1));
            } else if (!WORD.matcher(t).matches()) {
                ok = false;
            } else if (words.contains(t)) {
                ok = true;
            } else {
                ok = switch (before) {
                    case "-s", "--vaddr" -> address(t, family);
                    case "--vport" -> PORT.matcher(t).matches() && Integer.parseInt(t) <= 65535;
                    case "--mark", "--xor-mark", "--or-mark" -> MARK.matcher(t).matches();
                    default -> false;
                };
            }
            if (!ok) {
                throw rejected(table, tokens.get(1), rule, "'" + Printable.shown(t) + "' is not a word of IPVS mode's rules here");
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

    private static boolean address(String t, IpFamily family) {
        try {
            return (t.contains("/") ? Cidr.parse(t).family() : IpAddress.parse(t).family()) == family;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Words as iptables-restore splits them: on spaces, a double-quoted word kept whole. */
    static List<String> tokens(Table table, String rule) throws RejectedRuleException {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < rule.length()) {
            char c = rule.charAt(i);
            if (c == ' ') {
                i++;
                continue;
            }
            int end;
            if (c == '"') {
                end = rule.indexOf('"', i + 1);
                if (end < 0) {
                    throw rejected(table, "", rule, "an unterminated quote");
                }
                end++;
            } else {
                end = rule.indexOf(' ', i);
                end = end < 0 ? rule.length() : end;
            }
            out.add(rule.substring(i, end));
            i = end;
        }
        return out;
    }

    private static RejectedRuleException rejected(Table table, String chain, String rule, String why) {
        return new RejectedRuleException(table, chain, 0, "IPVS rule '" + Printable.shown(rule) + "': " + why);
    }
}
