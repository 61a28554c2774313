package io.rulesync.agent.rules;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Ports;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.SpecialRange;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.ServiceChain;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.TopChains;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The grammar of exactly the rules the compiler writes (ServicePortCompiler, FixedRules), checked
 * before anything reaches iptables-restore: rules come from the network, and a rule outside this
 * grammar is either a bug or an attack. Parsing is by structure, not by regex over the whole line,
 * so every value is checked by type (addresses by {@link IpAddress}/{@link Cidr}, ports, marks,
 * probabilities, chain names) and a comment can never break out of its quotes.
 *
 * <p>Within the grammar, no rule may send traffic to, or capture it for, an address in a special
 * range ({@link SpecialRange}): a DNAT to one, or a Service address match ({@code -d} with
 * {@code --dport}) on one, is refused like a syntax error.
 *
 * <p>Anything else is refused with a {@link RejectedRuleException} naming the table, chain, rule
 * number and the offending option or value.
 */
public final class RuleGrammar {
    /** XT_MAX_COMMENT_LEN is 256 including the terminating NUL. */
    static final int MAX_COMMENT_LENGTH = 255;
    /**
     * What the compiler puts into comments: Kubernetes names, IPs, {@code ip:port}, {@code [ip]:port},
     * {@code ->} and kube-proxy's fixed texts. No quote, backslash or control character, so a comment
     * cannot end its quoted string or start a new line.
     */
    private static final Pattern COMMENT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9 ./:;\\[\\]>_-]*");
    private static final Pattern NUMBER = Pattern.compile("[1-9][0-9]{0,9}");
    private static final Pattern HEX32 = Pattern.compile("0x[0-9a-fA-F]{1,8}");
    /** The compiler writes {@code %0.10f} of 1/n. */
    private static final Pattern PROBABILITY = Pattern.compile("[01]\\.[0-9]{1,10}");

    /** Options of each match module: name to "takes a value". Only those the compiler writes. */
    private static final Map<String, Map<String, Boolean>> MATCH_OPTIONS = Map.of(
            "comment", Map.of("--comment", true),
            "tcp", Map.of("--dport", true),
            "udp", Map.of("--dport", true),
            "sctp", Map.of("--dport", true),
            "addrtype", Map.of("--dst-type", true, "--src-type", true),
            "statistic", Map.of("--mode", true, "--probability", true),
            "recent", Map.of("--name", true, "--set", false, "--rcheck", false, "--seconds", true, "--reap", false),
            "mark", Map.of("--mark", true),
            "conntrack", Map.of("--ctstate", true));
    private static final Map<String, Map<String, Boolean>> TARGET_OPTIONS = Map.of(
            "DNAT", Map.of("--to-destination", true),
            "MARK", Map.of("--or-mark", true, "--xor-mark", true),
            "MASQUERADE", Map.of("--random-fully", false));
    private static final Set<String> NEGATABLE = Set.of("-s", "-d", "--mark", "--ctstate");
    /** Built-in targets per table, as the compiler uses them. */
    private static final Map<Table, Set<String>> BUILTIN_TARGETS = Map.of(
            Table.FILTER, Set.of("ACCEPT", "DROP", "REJECT"),
            Table.NAT, Set.of("RETURN", "DNAT", "MARK", "MASQUERADE"));

    private RuleGrammar() {
    }

    /**
     * Parses one rule body (the text after {@code -A CHAIN }) of a chain in {@code table}, for a
     * rule set of {@code family}. The chain name is checked too.
     *
     * @throws RejectedRuleException when the chain name or any part of the rule is outside the grammar
     */
    public static ParsedRule parse(Table table, IpFamily family, String chain, String body) {
        checkChainName(table, chain);
        return new Parser(table, family, chain, 0, body).parse();
    }

    /** Checks a chain's name and every rule; returns the parsed rules in order (rule numbers are 1-based). */
    public static List<ParsedRule> check(Table table, IpFamily family, Chain chain) {
        checkChainName(table, chain.name());
        List<ParsedRule> out = new ArrayList<>(chain.rules().size());
        int n = 0;
        for (String body : chain.rules()) {
            out.add(new Parser(table, family, chain.name(), ++n, body).parse());
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
        if (name == null) {
            throw new RejectedRuleException(table, "(none)", 0, "a chain needs a name");
        }
        boolean owned = TopChains.of(table).contains(name) || table == Table.NAT && isPerServiceChain(name);
        if (!owned) {
            throw new RejectedRuleException(table, name, 0,
                    "chain name " + Printable.quoted(name) + " is not one rulesync owns in the " + table.restoreName() + " table");
        }
    }

    /** A chain the compiler jumps to: only nat chains, and never the entry chains KUBE-SERVICES/KUBE-POSTROUTING. */
    private static boolean isJumpTarget(Table table, String name) {
        return table == Table.NAT
                && (name.equals(TopChains.MARK_MASQ) || name.equals(TopChains.NODEPORTS) || isPerServiceChain(name));
    }

    private record Token(String text, boolean quoted) {
    }

    /** One option as written: value is null for a flag. */
    private record Option(String name, String value, boolean negated) {
    }

    /** A {@code -m} module or the {@code -j} target with the options given to it, in order. */
    private static final class Module {
        final String name;
        final Map<String, Boolean> known;
        final Map<String, Option> options = new LinkedHashMap<>();

        Module(String name, Map<String, Boolean> known) {
            this.name = name;
            this.known = known;
        }

        Option get(String option) {
            return options.get(option);
        }

        boolean has(String option) {
            return options.containsKey(option);
        }
    }

    private static final class Parser {
        private final Table table;
        private final IpFamily family;
        private final String chain;
        private final int ruleNumber;
        private final String body;
        private List<Token> tokens;
        private int pos;

        private Option source;
        private Option destination;
        private String protocol;
        private final List<Module> modules = new ArrayList<>();
        private Module target;

        Parser(Table table, IpFamily family, String chain, int ruleNumber, String body) {
            this.table = table;
            this.family = family;
            this.chain = chain;
            this.ruleNumber = ruleNumber;
            this.body = body;
        }

        private RejectedRuleException fail(String problem) {
            return new RejectedRuleException(table, chain, ruleNumber, problem);
        }

        ParsedRule parse() {
            if (body == null || body.isEmpty()) {
                throw fail("the rule is empty");
            }
            tokens = tokenize();
            while (pos < tokens.size()) {
                readOne();
            }
            Optional<AddressMatch> src = Optional.ofNullable(source).map(this::address);
            Optional<AddressMatch> dst = Optional.ofNullable(destination).map(this::address);
            Optional<Protocol> proto = Optional.ofNullable(protocol).map(this::protocol);
            List<Match> matches = new ArrayList<>(modules.size());
            for (Module m : modules) {
                matches.add(match(m, proto));
            }
            if (proto.isPresent() && matches.stream().noneMatch(m -> m instanceof Match.Port)) {
                throw fail("-p " + protocol + " without -m " + protocol + " is not something rulesync emits");
            }
            Optional<Target> tgt = Optional.ofNullable(target).map(t -> target(t, proto));
            boolean servicePort = matches.stream().anyMatch(m -> m instanceof Match.Port p && p.destinationPort().isPresent());
            if (dst.isPresent() && servicePort && !dst.get().negated()) {
                // -d with --dport is a Service's address (ClusterIP, external or load-balancer IP); one in a
                // special range would capture traffic for the node itself. The node's own addresses for
                // NodePorts (loopback included) and the localnet guard come without a port and stay allowed.
                notSpecial("-d " + destination.value(), dst.get().cidr().network(),
                        "a Service's address there would capture traffic meant for the node itself");
            }
            return new ParsedRule(table, family, chain, src, dst, proto, matches, tgt);
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
                String where = out.isEmpty() ? "at the start of the rule" : "after " + Printable.of(out.get(out.size() - 1).text());
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
                    throw fail("a trailing space after " + Printable.of(out.get(out.size() - 1).text()));
                }
            }
        }

        private void checkChar(char c, boolean quoted, String where) {
            boolean ok = c > 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '\'' || (quoted && c == ' ');
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

        // ---- the option loop ----

        private Token next() {
            return tokens.get(pos++);
        }

        private String value(String option, boolean quotedAllowed) {
            if (pos >= tokens.size()) {
                throw fail(option + " needs a value");
            }
            Token t = next();
            if (t.quoted() && !quotedAllowed) {
                throw fail(option + " \"" + Printable.of(t.text()) + "\": a quoted value is only used for --comment");
            }
            return t.text();
        }

        private void readOne() {
            Token t = next();
            if (t.quoted()) {
                throw fail("a quoted value \"" + Printable.of(t.text()) + "\" where an option was expected");
            }
            boolean negated = false;
            String word = t.text();
            if (word.equals("!")) {
                if (pos >= tokens.size()) {
                    throw fail("'!' at the end of the rule");
                }
                Token n = next();
                if (n.quoted() || !NEGATABLE.contains(n.text())) {
                    throw fail("'!' before " + Printable.of(n.text()) + " is not something rulesync emits");
                }
                negated = true;
                word = n.text();
            }
            if (target != null && !word.startsWith("--")) {
                // The compiler writes the target last; only its own options follow it.
                throw fail(Printable.of(word) + " after -j " + target.name + " is not something rulesync emits");
            }
            switch (word) {
                case "-s" -> source = once(source, new Option(word, value(word, false), negated));
                case "-d" -> destination = once(destination, new Option(word, value(word, false), negated));
                case "-p" -> {
                    if (protocol != null) {
                        throw fail("-p appears twice");
                    }
                    protocol = value(word, false);
                }
                case "-m" -> startMatch(value(word, false));
                case "-j" -> startTarget(value(word, false));
                default -> option(word, negated);
            }
        }

        private Option once(Option previous, Option next) {
            if (previous != null) {
                throw fail(next.name() + " appears twice");
            }
            return next;
        }

        private void startMatch(String name) {
            Map<String, Boolean> known = MATCH_OPTIONS.get(name);
            if (known == null) {
                throw fail("match -m " + Printable.of(name) + " is not one rulesync emits");
            }
            for (Module m : modules) {
                if (m.name.equals(name)) {
                    throw fail("-m " + name + " appears twice");
                }
                if (isPortModule(m.name) && isPortModule(name)) {
                    throw fail("-m " + name + " after -m " + m.name + ": a rule has one protocol match");
                }
            }
            modules.add(new Module(name, known));
        }

        private void startTarget(String name) {
            Set<String> builtins = BUILTIN_TARGETS.get(table);
            if (!builtins.contains(name) && !isJumpTarget(table, name)) {
                Table other = table == Table.FILTER ? Table.NAT : Table.FILTER;
                String why = BUILTIN_TARGETS.get(other).contains(name)
                        ? "rulesync does not use it in the " + table.restoreName() + " table"
                        : "it is not a chain rulesync owns and jumps to, nor a target it uses";
                throw fail("-j " + Printable.of(name) + ": " + why);
            }
            target = new Module(name, TARGET_OPTIONS.getOrDefault(name, Map.of()));
        }

        private void option(String word, boolean negated) {
            if (!word.startsWith("--")) {
                throw fail(Printable.quoted(word) + " is not an option rulesync emits");
            }
            Module owner = null;
            if (target != null) {
                if (!target.known.containsKey(word)) {
                    throw fail("option " + Printable.of(word) + " after -j " + target.name + " is not one rulesync emits there");
                }
                owner = target;
            } else {
                for (Module m : modules) {
                    if (m.known.containsKey(word)) {
                        owner = m;
                        break;
                    }
                }
            }
            if (owner == null) {
                String module = moduleDefining(word);
                throw fail(module == null
                        ? "option " + Printable.of(word) + " is not one rulesync emits"
                        : "option " + word + " without " + module + " before it");
            }
            if (negated && !word.equals("--mark") && !word.equals("--ctstate")) {
                throw fail("'!' before " + word + " is not something rulesync emits");
            }
            if (owner.has(word)) {
                throw fail("option " + word + " appears twice");
            }
            String value = owner.known.get(word) ? value(word, word.equals("--comment")) : null;
            owner.options.put(word, new Option(word, value, negated));
        }

        private static String moduleDefining(String option) {
            List<String> names = new ArrayList<>();
            MATCH_OPTIONS.forEach((m, opts) -> {
                if (opts.containsKey(option)) {
                    names.add(m);
                }
            });
            TARGET_OPTIONS.forEach((t, opts) -> {
                if (opts.containsKey(option)) {
                    names.add("-j " + t);
                }
            });
            if (names.isEmpty()) {
                return null;
            }
            names.sort(null);
            List<String> shown = names.stream().map(n -> n.startsWith("-j") ? n : "-m " + n).toList();
            return String.join(" or ", shown);
        }

        private static boolean isPortModule(String name) {
            return name.equals("tcp") || name.equals("udp") || name.equals("sctp");
        }

        // ---- values ----

        private AddressMatch address(Option o) {
            String v = o.value();
            Cidr cidr;
            try {
                if (v.indexOf('/') >= 0) {
                    cidr = Cidr.parse(v);
                    if (!cidr.toString().equals(v)) {
                        throw fail(o.name() + " " + Printable.of(v) + ": not in canonical form (expected " + cidr + ")");
                    }
                } else {
                    IpAddress ip = IpAddress.parse(v);
                    if (!ip.toString().equals(v)) {
                        throw fail(o.name() + " " + Printable.of(v) + ": not in canonical form (expected " + ip + ")");
                    }
                    cidr = Cidr.parse(v + (ip.family() == IpFamily.IPV4 ? "/32" : "/128"));
                }
            } catch (RejectedRuleException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw fail(o.name() + " " + Printable.of(v) + ": " + e.getMessage());
            }
            if (cidr.family() != family) {
                throw fail(o.name() + " " + v + ": an " + cidr.family().id() + " address in an " + family.id() + " rule set");
            }
            if (o.negated() && cidr.prefix() == 0) {
                throw fail("! " + o.name() + " " + v + ": a negated /0 matches nothing (and iptables-nft refuses it)");
            }
            return new AddressMatch(o.negated(), cidr);
        }

        private Protocol protocol(String p) {
            return switch (p) {
                case "tcp" -> Protocol.TCP;
                case "udp" -> Protocol.UDP;
                case "sctp" -> Protocol.SCTP;
                default -> throw fail("-p " + Printable.of(p) + ": not a protocol rulesync emits (tcp, udp, sctp)");
            };
        }

        private int number(String option, String v, long min, long max) {
            if (!NUMBER.matcher(v).matches() || Long.parseLong(v) < min || Long.parseLong(v) > max) {
                throw fail(option + " " + Printable.of(v) + ": not a number in " + min + "-" + max);
            }
            return Integer.parseInt(v);
        }

        private int port(String option, String v) {
            return number(option, v, 1, 65535);
        }

        private long hex(String option, String v) {
            if (!HEX32.matcher(v).matches()) {
                throw fail(option + " " + Printable.of(v) + ": not a 32-bit hex value like 0x4000");
            }
            return Long.parseLong(v.substring(2), 16);
        }

        private Option required(Module m, String option) {
            Option o = m.get(option);
            if (o == null) {
                throw fail((m == target ? "-j " : "-m ") + m.name + " without " + option);
            }
            return o;
        }

        private Match match(Module m, Optional<Protocol> proto) {
            return switch (m.name) {
                case "comment" -> new Match.Comment(comment(required(m, "--comment").value()));
                case "tcp", "udp", "sctp" -> {
                    if (proto.isEmpty() || !proto.get().lower().equals(m.name)) {
                        throw fail("-m " + m.name + " needs -p " + m.name
                                + (proto.isPresent() ? ", not -p " + proto.get().lower() : ""));
                    }
                    Option d = m.get("--dport");
                    yield new Match.Port(proto.get(),
                            d == null ? OptionalInt.empty() : OptionalInt.of(port("--dport", d.value())));
                }
                case "addrtype" -> {
                    Option dst = m.get("--dst-type");
                    Option src = m.get("--src-type");
                    if ((dst == null) == (src == null)) {
                        throw fail("-m addrtype needs exactly one of --dst-type and --src-type");
                    }
                    Option o = dst != null ? dst : src;
                    if (!o.value().equals("LOCAL")) {
                        throw fail(o.name() + " " + Printable.of(o.value()) + ": rulesync only emits LOCAL");
                    }
                    yield new Match.AddrType(src != null, "LOCAL");
                }
                case "statistic" -> {
                    String mode = required(m, "--mode").value();
                    if (!mode.equals("random")) {
                        throw fail("--mode " + Printable.of(mode) + ": rulesync only emits random");
                    }
                    yield new Match.Statistic(probability(required(m, "--probability").value()));
                }
                case "recent" -> recent(m);
                case "mark" -> {
                    Option o = required(m, "--mark");
                    int slash = o.value().indexOf('/');
                    if (slash < 0) {
                        throw fail("--mark " + Printable.of(o.value()) + ": rulesync emits VALUE/MASK");
                    }
                    yield new Match.Mark(o.negated(), hex("--mark", o.value().substring(0, slash)),
                            hex("--mark", o.value().substring(slash + 1)));
                }
                case "conntrack" -> {
                    Option o = required(m, "--ctstate");
                    List<Match.CtState> states = new ArrayList<>();
                    for (String s : o.value().split(",", -1)) {
                        Match.CtState state = ctState(s);
                        if (states.contains(state)) {
                            throw fail("--ctstate " + Printable.of(o.value()) + ": " + s + " appears twice");
                        }
                        states.add(state);
                    }
                    yield new Match.Conntrack(o.negated(), states);
                }
                default -> throw new IllegalStateException("module without a builder: " + m.name);
            };
        }

        private Match.CtState ctState(String s) {
            for (Match.CtState c : Match.CtState.values()) {
                if (c.name().equals(s)) {
                    return c;
                }
            }
            throw fail("--ctstate: " + Printable.quoted(s) + " is not a conntrack state");
        }

        private Match recent(Module m) {
            String name = required(m, "--name").value();
            if (!ServiceChain.SEP.names(name)) {
                throw fail("--name " + Printable.of(name) + ": rulesync names recent lists after KUBE-SEP-… chains");
            }
            boolean set = m.has("--set");
            boolean rcheck = m.has("--rcheck");
            if (set == rcheck) {
                throw fail("-m recent needs exactly one of --set and --rcheck");
            }
            if (set) {
                if (m.has("--seconds") || m.has("--reap")) {
                    throw fail("-m recent --set with --seconds or --reap is not something rulesync emits");
                }
                return new Match.Recent(name, true, OptionalInt.empty(), false);
            }
            int seconds = number("--seconds", required(m, "--seconds").value(), 1, Ports.MAX_AFFINITY_TIMEOUT_SECONDS);
            required(m, "--reap");
            return new Match.Recent(name, false, OptionalInt.of(seconds), true);
        }

        private String comment(String text) {
            if (text.length() > MAX_COMMENT_LENGTH) {
                throw fail("--comment: " + text.length() + " characters, the kernel keeps at most " + MAX_COMMENT_LENGTH);
            }
            if (!COMMENT.matcher(text).matches()) {
                throw fail("--comment " + Printable.quoted(text)
                        + ": only letters, digits, space and . / : ; [ ] > _ - are allowed, starting with a letter or digit");
            }
            return text;
        }

        private String probability(String v) {
            if (!PROBABILITY.matcher(v).matches()) {
                throw fail("--probability " + Printable.of(v) + ": not a decimal like 0.5000000000");
            }
            BigDecimal p = new BigDecimal(v);
            if (p.signum() <= 0 || p.compareTo(BigDecimal.ONE) > 0) {
                throw fail("--probability " + v + ": not in (0, 1]");
            }
            return v;
        }

        private Target target(Module t, Optional<Protocol> proto) {
            return switch (t.name) {
                case "ACCEPT", "DROP", "RETURN" -> new Target.Verdict(t.name);
                case "REJECT" -> new Target.Reject();
                case "DNAT" -> dnat(required(t, "--to-destination").value(), proto);
                case "MARK" -> {
                    Option or = t.get("--or-mark");
                    Option xor = t.get("--xor-mark");
                    if ((or == null) == (xor == null)) {
                        throw fail("-j MARK needs exactly one of --or-mark and --xor-mark");
                    }
                    Option o = or != null ? or : xor;
                    yield new Target.SetMark(xor != null, hex(o.name(), o.value()));
                }
                case "MASQUERADE" -> new Target.Masquerade(t.has("--random-fully"));
                default -> new Target.Jump(t.name);
            };
        }

        private Target dnat(String v, Optional<Protocol> proto) {
            String where = "--to-destination " + Printable.of(v);
            if (proto.isEmpty()) {
                throw fail(where + ": a destination port needs -p tcp, udp or sctp");
            }
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
