package io.rulesync.model.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Ports;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.ServiceChain;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.TopChains;
import io.rulesync.model.text.Printable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The grammar of exactly the rules the compiler writes (ServicePortCompiler, FixedRules), checked
 * before anything reaches iptables-restore: rules come from the network, and a rule outside this
 * grammar is either a bug or an attack. Parsing is by structure, not by regex over the whole line,
 * into the typed {@link Rule} the compiler built, so every value is checked by type (addresses by
 * {@link IpAddress}/{@link Cidr}, ports, marks, probabilities, chain names) and a comment can never
 * break out of its quotes. A module's options are read in the one order the compiler writes them,
 * so {@code parse(rule.restoreForm())} gives {@code rule} back.
 *
 * <p>Within the grammar, no rule may send traffic to, or capture it for, an address in a special
 * range ({@link SpecialRange}): a DNAT to one, or a Service address match ({@code -d} with
 * {@code --dport}) on one, is refused like a syntax error.
 *
 * <p>Anything else is refused with a {@link RejectedRuleException} naming the table, chain, rule
 * number and the offending option or value.
 */
public final class RuleGrammar {
    private static final Pattern NUMBER = Pattern.compile("[1-9][0-9]{0,9}");

    /** Which mode's rules: they differ in chains, targets and matches, not in how a rule is written. */
    public enum Dialect {
        /** iptables mode: kube-proxy's fixed chains and each Service port's own. */
        IPTABLES(
                Map.of(
                        Table.FILTER,
                        Set.of("ACCEPT", "DROP", "REJECT"),
                        Table.NAT,
                        Set.of("RETURN", "DNAT", "MARK", "MASQUERADE")),
                Set.of("comment", "tcp", "udp", "sctp", "addrtype", "statistic", "recent", "mark", "conntrack")),
        /** IPVS mode's fixed rules around its ipsets; a {@code -p} there comes without its port match. */
        IPVS(
                Map.of(
                        Table.FILTER,
                        Set.of("ACCEPT", "DROP", "REJECT", "RETURN"),
                        Table.NAT,
                        Set.of("ACCEPT", "RETURN", "MARK", "MASQUERADE")),
                Set.of("comment", "addrtype", "mark", "conntrack", "set", "physdev", "ipvs"));

        private final Map<Table, Set<String>> builtins;
        private final Set<String> modules;

        Dialect(Map<Table, Set<String>> builtins, Set<String> modules) {
            this.builtins = builtins;
            this.modules = modules;
        }

        /** A chain rulesync declares (and therefore flushes) in {@code table} in this mode. */
        boolean owns(Table table, String chain) {
            if (this == IPVS) {
                return (table == Table.NAT ? IpvsRules.NAT_CHAINS : IpvsRules.FILTER_CHAINS).contains(chain);
            }
            return TopChains.of(table).contains(chain) || table == Table.NAT && isPerServiceChain(chain);
        }

        /** A chain the rules jump to; never an entry chain such as KUBE-SERVICES. */
        boolean jumpsTo(Table table, String chain) {
            if (this == IPVS) {
                return table == Table.NAT
                        ? IPVS_NAT_JUMPS.contains(chain)
                        : chain.equals("KUBE-SOURCE-RANGES-FIREWALL");
            }
            return table == Table.NAT
                    && (chain.equals(TopChains.MARK_MASQ)
                            || chain.equals(TopChains.NODEPORTS)
                            || isPerServiceChain(chain));
        }
    }

    private static final Set<String> IPVS_NAT_JUMPS =
            Set.of(TopChains.MARK_MASQ, "KUBE-LOAD-BALANCER", "KUBE-NODE-PORT");

    private RuleGrammar() {}

    /**
     * Parses one rule body of a chain in {@code table} in a mode's rules. The chain name is checked too.
     *
     * @throws RejectedRuleException when the chain name or any part of the rule is outside the grammar
     */
    public static Rule parse(Dialect dialect, Table table, IpFamily family, String chain, String body) {
        checkChainName(dialect, table, chain);
        return new Parser(dialect, table, family, chain, 0, body).parse();
    }

    /**
     * Parses one rule body (the text after {@code -A CHAIN }) of a chain in {@code table}, for a
     * rule set of {@code family}. The chain name is checked too.
     *
     * @throws RejectedRuleException when the chain name or any part of the rule is outside the grammar
     */
    public static Rule parse(Table table, IpFamily family, String chain, String body) {
        return parse(Dialect.IPTABLES, table, family, chain, body);
    }

    /** Checks a chain's name and every rule; returns the parsed rules in order (rule numbers are 1-based). */
    public static List<Rule> check(Table table, IpFamily family, Chain chain) {
        checkChainName(table, chain.name());
        List<Rule> out = new ArrayList<>(chain.rules().size());
        int n = 0;
        for (String body : chain.rules()) {
            out.add(new Parser(Dialect.IPTABLES, table, family, chain.name(), ++n, body).parse());
        }
        return List.copyOf(out);
    }

    /** Checks every chain of both tables, and that no chain is declared twice in a table. */
    public static void check(RuleSet rules) {
        for (Table table : Table.values()) {
            Set<String> seen = new HashSet<>();
            for (Chain chain : rules.chains(table)) {
                check(table, rules.family(), chain);
                if (!seen.add(chain.name())) {
                    throw new RejectedRuleException(table, chain.name(), 0, "the chain is declared twice");
                }
            }
        }
    }

    /** Whether a chain is one of a Service port's own (KUBE-SVC/SVL/EXT/FW/SEP-hash), not a shared one. */
    public static boolean isPerServiceChain(String name) {
        return ServiceChain.of(name).isPresent();
    }

    /**
     * A chain rulesync may declare (and therefore flush) in {@code table}: kube-proxy's names only, as the
     * model's chain vocabulary ({@link TopChains}, {@link ServiceChain}) defines them; a port's own chains are nat chains.
     */
    public static void checkChainName(Table table, String name) {
        checkChainName(Dialect.IPTABLES, table, name);
    }

    private static void checkChainName(Dialect dialect, Table table, String name) {
        if (name == null) {
            throw new RejectedRuleException(table, "(none)", 0, "a chain needs a name");
        }
        if (!dialect.owns(table, name)) {
            throw new RejectedRuleException(
                    table,
                    name,
                    0,
                    "chain name " + Printable.quoted(name) + " is not one rulesync owns in the " + table.restoreName()
                            + " table");
        }
    }

    private record Token(String text, boolean quoted) {}

    private static final class Parser {
        private final Dialect dialect;
        private final Table table;
        private final IpFamily family;
        private final String chain;
        private final int ruleNumber;
        private final String body;
        private List<Token> tokens;
        private int pos;
        private final List<Part> parts = new ArrayList<>(8);
        private Target target;
        private String targetName;

        Parser(Dialect dialect, Table table, IpFamily family, String chain, int ruleNumber, String body) {
            this.dialect = dialect;
            this.table = table;
            this.family = family;
            this.chain = chain;
            this.ruleNumber = ruleNumber;
            this.body = body;
        }

        private RejectedRuleException fail(String problem) {
            return new RejectedRuleException(table, chain, ruleNumber, problem);
        }

        Rule parse() {
            if (body == null || body.isEmpty()) {
                throw fail("the rule is empty");
            }
            tokens = tokenize();
            while (pos < tokens.size()) {
                readOne();
            }
            Rule rule;
            try {
                rule = new Rule(parts, Optional.ofNullable(target));
            } catch (IllegalArgumentException e) {
                throw fail(e.getMessage());
            }
            if (dialect == Dialect.IPTABLES
                    && rule.protocol().isPresent()
                    && rule.first(Part.PortMatch.class).isEmpty()) {
                String p = rule.protocol().get().lower();
                throw fail("-p " + p + " without -m " + p + " is not something rulesync emits");
            }
            if (target instanceof Target.Dnat && rule.protocol().isEmpty()) {
                throw fail(
                        "--to-destination " + ((Target.Dnat) target).address().withPort(((Target.Dnat) target).port())
                                + ": a destination port needs -p tcp, udp or sctp");
            }
            Optional<Part.Address> dst = rule.destination();
            if (dst.isPresent()
                    && rule.destinationPort().isPresent()
                    && !dst.get().negated()) {
                // -d with --dport is a Service's address (ClusterIP, external or load-balancer IP); one in a
                // special range would capture traffic for the node itself. The node's own addresses for
                // NodePorts (loopback included) and the localnet guard come without a port and stay allowed.
                notSpecial(
                        "-d " + dst.get().cidr().network(),
                        dst.get().cidr().network(),
                        "a Service's address there would capture traffic meant for the node itself");
            }
            return rule;
        }

        // ---- lexing ----

        /**
         * Splits on single spaces the way iptables-restore does, with double quotes around a value
         * that contains spaces. Only what the compiler writes is accepted: no tabs, runs of spaces,
         * backslashes, quotes inside a word, or characters outside printable ASCII.
         */
        private List<Token> tokenize() {
            List<Token> out = new ArrayList<>();
            int n = body.length();
            int i = 0;
            while (true) {
                String where = out.isEmpty()
                        ? "at the start of the rule"
                        : "after " + Printable.shown(out.get(out.size() - 1).text());
                char c = body.charAt(i);
                if (c == ' ') {
                    throw fail("a stray space " + where + " (words are separated by exactly one space)");
                }
                if (c == '"') {
                    int close = body.indexOf('"', i + 1);
                    int end = close < 0 ? n : close;
                    for (int k = i + 1; k < end; k++) {
                        checkChar(body.charAt(k), true, where);
                    }
                    if (close < 0) {
                        throw fail("an unterminated quoted value " + where);
                    }
                    out.add(new Token(body.substring(i + 1, close), true));
                    i = close + 1;
                    if (i < n && body.charAt(i) != ' ') {
                        throw fail("a quoted value " + where + " must be followed by a space, not "
                                + describe(body.charAt(i)) + " (a quote cannot be part of a value)");
                    }
                } else {
                    int end = body.indexOf(' ', i);
                    if (end < 0) {
                        end = n;
                    }
                    for (int k = i; k < end; k++) {
                        checkChar(body.charAt(k), false, where);
                    }
                    out.add(new Token(body.substring(i, end), false));
                    i = end;
                }
                if (i == n) {
                    return out;
                }
                i++; // the separating space
                if (i == n) {
                    throw fail("a trailing space after "
                            + Printable.shown(out.get(out.size() - 1).text()));
                }
            }
        }

        private void checkChar(char c, boolean quoted, String where) {
            // A single quote means nothing to iptables-restore inside double quotes (kube-proxy's IPVS comments hold
            // some).
            boolean ok =
                    c > 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '\'' || quoted && (c == ' ' || c == '\'');
            if (!ok) {
                throw fail("character " + describe(c) + " " + where + " is not allowed in a rule");
            }
        }

        private static String describe(char c) {
            if (c < 0x20 || c >= 0x7f) {
                return String.format(c < 0x100 ? "\\x%02x" : "\\u%04x", (int) c);
            }
            return "'" + c + "'";
        }

        // ---- reading, in the order written ----

        private boolean more() {
            return pos < tokens.size();
        }

        private String peek() {
            return more() && !tokens.get(pos).quoted() ? tokens.get(pos).text() : null;
        }

        private String value(String option) {
            if (!more()) {
                throw fail(option + " needs a value");
            }
            Token t = tokens.get(pos++);
            if (t.quoted() && !option.equals("--comment")) {
                throw fail(
                        option + " \"" + Printable.shown(t.text()) + "\": a quoted value is only used for --comment");
            }
            return t.text();
        }

        /** The next word must be {@code option}, an option of {@code module} in the compiler's order. */
        private void expect(String module, String option) {
            String next = peek();
            if (!option.equals(next)) {
                throw fail(
                        module + " without " + option + (next == null ? "" : " (found " + Printable.shown(next) + ")"));
            }
            pos++;
        }

        /** Whether the next word is {@code option}; consumes it if so. */
        private boolean accept(String option) {
            if (option.equals(peek())) {
                pos++;
                return true;
            }
            return false;
        }

        private void readOne() {
            Token t = tokens.get(pos++);
            if (t.quoted()) {
                throw fail("a quoted value \"" + Printable.shown(t.text()) + "\" where an option was expected");
            }
            String word = t.text();
            boolean negated = false;
            if (word.equals("!")) {
                String n = peek();
                if (n == null) {
                    throw fail(
                            more()
                                    ? "'!' before a quoted value is not something rulesync emits"
                                    : "'!' at the end of the rule");
                }
                if (!n.equals("-s") && !n.equals("-d")) {
                    throw fail("'!' before " + Printable.shown(n) + " is not something rulesync emits");
                }
                negated = true;
                word = n;
                pos++;
            }
            if (target != null) {
                // The compiler writes the target last, with its options right after it.
                throw fail(
                        word.startsWith("--")
                                ? "option " + Printable.shown(word) + " after -j " + targetName
                                        + " is not one rulesync emits there"
                                : Printable.shown(word) + " after -j " + targetName
                                        + " is not something rulesync emits");
            }
            switch (word) {
                case "-s", "-d" -> parts.add(address(word, negated, value(word)));
                case "-p" -> parts.add(new Part.Proto(protocol(value(word))));
                case "-m" -> parts.add(match(value(word)));
                case "--dport" -> parts.add(new Part.DestinationPort(port("--dport", value(word))));
                case "-j" -> {
                    targetName = value(word);
                    target = target(targetName);
                }
                default ->
                    throw fail(
                            word.startsWith("--")
                                    ? "option " + Printable.shown(word) + " is not one rulesync emits"
                                    : Printable.quoted(word) + " is not an option rulesync emits");
            }
        }

        private <T> T guard(java.util.function.Supplier<T> build) {
            try {
                return build.get();
            } catch (RejectedRuleException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw fail(e.getMessage());
            }
        }

        private Part.Match match(String name) {
            if (!dialect.modules.contains(name)) {
                throw fail("match -m " + Printable.shown(name) + " is not one rulesync emits"
                        + (dialect == Dialect.IPVS ? " in IPVS mode" : ""));
            }
            return switch (name) {
                case "comment" -> {
                    expect("-m comment", "--comment");
                    String value = value("--comment");
                    yield guard(
                            () -> new Part.Comment(value, tokens.get(pos - 1).quoted()));
                }
                case "tcp", "udp", "sctp" -> new Part.PortMatch(protocol(name));
                case "addrtype" -> {
                    boolean negated = accept("!");
                    boolean source = accept("--src-type");
                    if (!source) {
                        expect("-m addrtype", "--dst-type");
                    }
                    String type = value(source ? "--src-type" : "--dst-type");
                    if (!type.equals("LOCAL")) {
                        throw fail((source ? "--src-type " : "--dst-type ") + Printable.shown(type)
                                + ": rulesync only emits LOCAL");
                    }
                    yield new Part.AddrType(source, negated);
                }
                case "statistic" -> {
                    expect("-m statistic", "--mode");
                    String mode = value("--mode");
                    if (!mode.equals("random")) {
                        throw fail("--mode " + Printable.shown(mode) + ": rulesync only emits random");
                    }
                    expect("-m statistic", "--probability");
                    String p = value("--probability");
                    yield guard(() -> new Part.Statistic(p));
                }
                case "recent" -> recent();
                case "set" -> {
                    expect("-m set", "--match-set");
                    String set = value("--match-set");
                    String flags = value("--match-set " + set);
                    yield guard(() -> new Part.SetMatch(set, flags));
                }
                case "physdev" -> {
                    if (!accept("!")) {
                        throw fail("-m physdev: rulesync only emits ! --physdev-is-in");
                    }
                    expect("-m physdev !", "--physdev-is-in");
                    yield new Part.NotBridged();
                }
                case "ipvs" -> {
                    expect("-m ipvs", "--vaddr");
                    Part.Address vaddr = address("--vaddr", false, value("--vaddr"));
                    if (vaddr.prefixWritten()) {
                        throw fail("--vaddr " + vaddr.cidr() + ": rulesync writes a single address");
                    }
                    expect("-m ipvs", "--vproto");
                    Protocol vproto = protocol(value("--vproto"));
                    expect("-m ipvs", "--vport");
                    int vport = port("--vport", value("--vport"));
                    yield new Part.Ipvs(vaddr.cidr().network(), vproto, vport);
                }
                case "mark" -> {
                    boolean negated = accept("!");
                    expect("-m mark", "--mark");
                    String v = value("--mark");
                    int slash = v.indexOf('/');
                    if (slash < 0) {
                        throw fail("--mark " + Printable.shown(v) + ": rulesync emits VALUE/MASK");
                    }
                    yield new Part.Mark(
                            negated, hex("--mark", v.substring(0, slash)), hex("--mark", v.substring(slash + 1)));
                }
                case "conntrack" -> {
                    boolean negated = accept("!");
                    expect("-m conntrack", "--ctstate");
                    String v = value("--ctstate");
                    List<Part.CtState> states = new ArrayList<>();
                    for (String st : v.split(",", -1)) {
                        Part.CtState state = ctState(st);
                        if (states.contains(state)) {
                            throw fail("--ctstate " + Printable.shown(v) + ": " + st + " appears twice");
                        }
                        states.add(state);
                    }
                    yield new Part.Conntrack(negated, states);
                }
                default -> throw fail("match -m " + Printable.shown(name) + " is not one rulesync emits");
            };
        }

        private Part.Match recent() {
            expect("-m recent", "--name");
            String name = value("--name");
            boolean set = accept("--set");
            if (set == accept("--rcheck") || "--rcheck".equals(peek()) || "--set".equals(peek())) {
                throw fail("-m recent needs exactly one of --set and --rcheck, after --name");
            }
            if (set) {
                return guard(() -> Part.Recent.remember(name));
            }
            expect("-m recent --rcheck", "--seconds");
            String secondsText = value("--seconds");
            int seconds = number("--seconds", secondsText, 1, Ports.MAX_AFFINITY_TIMEOUT_SECONDS);
            expect("-m recent --rcheck", "--reap");
            return guard(() -> Part.Recent.check(name, seconds));
        }

        private Part.CtState ctState(String s) {
            for (Part.CtState c : Part.CtState.values()) {
                if (c.name().equals(s)) {
                    return c;
                }
            }
            throw fail("--ctstate: " + Printable.quoted(s) + " is not a conntrack state");
        }

        private Target target(String name) {
            Set<String> builtins = dialect.builtins.get(table);
            if (!builtins.contains(name) && !dialect.jumpsTo(table, name)) {
                Table other = table == Table.FILTER ? Table.NAT : Table.FILTER;
                String why = dialect.builtins.get(other).contains(name)
                        ? "rulesync does not use it in the " + table.restoreName() + " table"
                        : "it is not a chain rulesync owns and jumps to, nor a target it uses";
                throw fail("-j " + Printable.shown(name) + ": " + why);
            }
            return switch (name) {
                case "ACCEPT" -> Target.Verdict.ACCEPT;
                case "DROP" -> Target.Verdict.DROP;
                case "RETURN" -> Target.Verdict.RETURN;
                case "REJECT" -> new Target.Reject();
                case "DNAT" -> {
                    expect("-j DNAT", "--to-destination");
                    yield dnat(value("--to-destination"));
                }
                case "MARK" -> {
                    boolean xor = accept("--xor-mark");
                    if (!xor && !accept("--or-mark")) {
                        throw fail("-j MARK needs exactly one of --or-mark and --xor-mark"
                                + (peek() == null ? "" : ", not " + Printable.shown(peek())));
                    }
                    String option = xor ? "--xor-mark" : "--or-mark";
                    Target mark = new Target.SetMark(xor, hex(option, value(option)));
                    if ("--or-mark".equals(peek()) || "--xor-mark".equals(peek())) {
                        throw fail("-j MARK needs exactly one of --or-mark and --xor-mark");
                    }
                    yield mark;
                }
                case "MASQUERADE" -> new Target.Masquerade(accept("--random-fully"));
                default -> new Target.Jump(name);
            };
        }

        // ---- values ----

        private Part.Address address(String flag, boolean negated, String v) {
            Cidr cidr;
            boolean prefixWritten = v.indexOf('/') >= 0;
            try {
                if (prefixWritten) {
                    cidr = Cidr.parse(v);
                    if (!cidr.toString().equals(v)) {
                        throw fail(flag + " " + Printable.shown(v) + ": not in canonical form (expected " + cidr + ")");
                    }
                } else {
                    IpAddress ip = IpAddress.parse(v);
                    if (!ip.toString().equals(v)) {
                        throw fail(flag + " " + Printable.shown(v) + ": not in canonical form (expected " + ip + ")");
                    }
                    cidr = Cidr.host(ip);
                }
            } catch (RejectedRuleException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw fail(flag + " " + Printable.shown(v) + ": " + e.getMessage());
            }
            if (cidr.family() != family) {
                throw fail(
                        flag + " " + v + ": an " + cidr.family().id() + " address in an " + family.id() + " rule set");
            }
            Cidr checked = cidr;
            return guard(() -> new Part.Address(flag.equals("-s"), negated, checked, prefixWritten));
        }

        private Protocol protocol(String p) {
            return switch (p) {
                case "tcp" -> Protocol.TCP;
                case "udp" -> Protocol.UDP;
                case "sctp" -> Protocol.SCTP;
                default -> throw fail("-p " + Printable.shown(p) + ": not a protocol rulesync emits (tcp, udp, sctp)");
            };
        }

        private int number(String option, String v, long min, long max) {
            if (!NUMBER.matcher(v).matches() || Long.parseLong(v) < min || Long.parseLong(v) > max) {
                throw fail(option + " " + Printable.shown(v) + ": not a number in " + min + "-" + max);
            }
            return Integer.parseInt(v);
        }

        private int port(String option, String v) {
            return number(option, v, 1, 65535);
        }

        private Hex hex(String option, String v) {
            try {
                return Hex.parse(v);
            } catch (IllegalArgumentException e) {
                throw fail(option + " " + Printable.shown(v) + ": not a 32-bit hex value like 0x00004000");
            }
        }

        private Target dnat(String v) {
            String where = "--to-destination " + Printable.shown(v);
            String host;
            String port;
            if (family == IpFamily.IPV6) {
                int close = v.indexOf("]:");
                if (!v.startsWith("[") || close < 0) {
                    throw fail(where + ": expected [IPv6]:PORT");
                }
                host = v.substring(1, close);
                port = v.substring(close + 2);
            } else {
                int colon = v.lastIndexOf(':');
                if (colon < 0) {
                    throw fail(where + ": expected IPv4:PORT");
                }
                host = v.substring(0, colon);
                port = v.substring(colon + 1);
            }
            IpAddress ip;
            try {
                ip = IpAddress.parse(host);
            } catch (IllegalArgumentException e) {
                throw fail(where + ": " + e.getMessage());
            }
            if (ip.family() != family || !ip.toString().equals(host)) {
                throw fail(where + ": expected a canonical " + family.id() + " address");
            }
            notSpecial(where, ip, "the API server refuses it as an endpoint");
            return new Target.Dnat(ip, port("--to-destination port", port));
        }

        /**
         * What the API server refuses for endpoints and external IPs (and the compiler never emits):
         * an unspecified, loopback, link-local (the cloud metadata service) or link-local multicast
         * address, or an IPv4-mapped IPv6 one. Traffic sent to or captured at one would reach the node
         * itself.
         */
        private void notSpecial(String where, IpAddress ip, String why) {
            Optional<String> wrong = SpecialRange.refusal(ip);
            if (wrong.isPresent()) {
                throw fail(where + ": " + ip + " " + wrong.get() + " (" + why + ")");
            }
        }
    }
}
