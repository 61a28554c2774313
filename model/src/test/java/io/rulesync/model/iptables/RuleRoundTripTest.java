package io.rulesync.model.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.Table;
import io.rulesync.model.rules.TopChains;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reading a rule's text gives the rule back: for random typed rules anywhere in the grammar (any
 * order of parts, either table, both families), {@code parse(rule.restoreForm())} equals the rule. So
 * what the compiler builds is what the agent checks, and nothing is lost or added in between. Each
 * case is one seed.
 */
class RuleRoundTripTest {
    private static final String COMMENT_CHARS = "abcXYZ019 ./:;[]>_-+=,'";
    private static final List<String> SERVICE_CHAINS = List.of(
            "KUBE-SVC-XPGD46QRK7WJZT7O",
            "KUBE-SVL-GNZBNJ2PO5MGZ6GT",
            "KUBE-EXT-XPGD46QRK7WJZT7O",
            "KUBE-FW-GNZBNJ2PO5MGZ6GT",
            "KUBE-SEP-SXIVWICOYRO3J4NJ");

    static long[] seeds() {
        return new Random(7).longs(300).toArray();
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void parsingTheRestoreFormGivesTheRuleBack(long seed) {
        Random r = new Random(seed);
        for (int i = 0; i < 20; i++) {
            IpFamily family = r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6;
            Table table = r.nextBoolean() ? Table.NAT : Table.FILTER;
            String chain = table == Table.NAT ? TopChains.SERVICES : TopChains.FORWARD;
            Rule rule = randomRule(r, family, table);
            String text = rule.restoreForm();
            Rule back = RuleGrammar.parse(table, family, chain, text);
            assertThat(back).as("seed %d: %s", seed, text).isEqualTo(rule);
            assertThat(back.restoreForm()).isEqualTo(text);
            assertThat(back.kernelForm(family, chain)).isEqualTo(rule.kernelForm(family, chain));
        }
    }

    @Test
    void iptablesModeWritesNoProtocolWithoutItsPortMatch() {
        String text = Rule.with()
                .add(new Part.Proto(Protocol.UDP))
                .jump(TopChains.MARK_MASQ)
                .restoreForm();
        assertThatThrownBy(() -> RuleGrammar.parse(Table.NAT, IpFamily.IPV4, TopChains.SERVICES, text))
                .hasMessageContaining("-p udp without -m udp");
    }

    /** IPVS mode's dialect: its chains, ipset and ipvs matches, and a -p without a port match. */
    @ParameterizedTest
    @MethodSource("seeds")
    void theIpvsDialectReadsBackToo(long seed) {
        Random r = new Random(seed);
        for (int i = 0; i < 10; i++) {
            IpFamily family = r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6;
            Table table = r.nextBoolean() ? Table.NAT : Table.FILTER;
            List<String> chains = table == Table.NAT ? IpvsRules.NAT_CHAINS : IpvsRules.FILTER_CHAINS;
            String chain = chains.get(r.nextInt(chains.size()));
            Rule rule = randomIpvsRule(r, family, table);
            String text = rule.restoreForm();
            assertThat(RuleGrammar.parse(RuleGrammar.Dialect.IPVS, table, family, chain, text))
                    .as("seed %d: %s", seed, text)
                    .isEqualTo(rule);
        }
    }

    @Test
    void aRuleThatIptablesWouldRefuseCannotBeBuilt() {
        assertThatThrownBy(() -> Rule.with().destinationPort(80).jump(TopChains.MARK_MASQ))
                .hasMessageContaining("--dport without -m tcp");
        assertThatThrownBy(() -> Rule.with()
                        .add(new Part.PortMatch(Protocol.TCP))
                        .add(new Part.Proto(Protocol.UDP))
                        .noTarget())
                .hasMessageContaining("-m tcp needs -p tcp, not -p udp");
        assertThatThrownBy(() -> Rule.with()
                        .source(IpAddress.parse("10.0.0.1"))
                        .source(IpAddress.parse("10.0.0.2"))
                        .noTarget())
                .hasMessageContaining("-s appears twice");
        assertThatThrownBy(() -> Rule.with().comment("a \"b").noTarget()).hasMessageContaining("--comment");
        assertThatThrownBy(() -> Rule.with().bareComment("a b").noTarget()).hasMessageContaining("double quotes");
        assertThatThrownBy(() -> new Part.Address(true, false, Cidr.parse("10.0.0.0/8"), false))
                .hasMessageContaining("only a single address");
        assertThatThrownBy(() -> new Part.Statistic("1.5")).hasMessageContaining("not in (0, 1]");
        assertThatThrownBy(() -> Part.Recent.check("KUBE-SVC-XPGD46QRK7WJZT7O", 10))
                .hasMessageContaining("--name");
        assertThatThrownBy(() -> new Hex(0x10000, 4)).hasMessageContaining("does not fit 4 hex digits");
        assertThatThrownBy(() -> Rule.with().noTarget()).hasMessageContaining("empty");
    }

    private static Rule randomRule(Random r, IpFamily family, Table table) {
        List<Part> parts = new ArrayList<>();
        Optional<Target> target = randomTarget(r, family, table);
        boolean needsProtocol = target.isPresent() && target.get() instanceof Target.Dnat;
        boolean protocol = needsProtocol || r.nextInt(3) > 0;
        Protocol proto = Protocol.values()[r.nextInt(Protocol.values().length)];
        if (protocol) {
            parts.add(new Part.PortMatch(proto));
            parts.add(new Part.Proto(proto));
        }
        if (r.nextBoolean()) {
            parts.add(address(r, family, true));
        }
        if (r.nextBoolean()) {
            parts.add(address(r, family, false));
        }
        if (r.nextBoolean()) {
            parts.add(comment(r));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.AddrType(r.nextBoolean()));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.Statistic(String.format("%.10f", 1.0 / (2 + r.nextInt(40)))));
        }
        if (r.nextInt(4) == 0) {
            String sep = SERVICE_CHAINS.get(4);
            parts.add(r.nextBoolean() ? Part.Recent.remember(sep) : Part.Recent.check(sep, 1 + r.nextInt(86400)));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.Mark(r.nextBoolean(), hex(r), hex(r)));
        }
        if (r.nextInt(4) == 0) {
            List<Part.CtState> states = new ArrayList<>(List.of(Part.CtState.values()));
            Collections.shuffle(states, r);
            parts.add(new Part.Conntrack(r.nextBoolean(), states.subList(0, 1 + r.nextInt(states.size()))));
        }
        Collections.shuffle(parts, r);
        if (protocol && r.nextBoolean()) {
            // A port match's --dport anywhere after it, as kube-proxy writes it after -d.
            int after = parts.indexOf(new Part.PortMatch(proto));
            parts.add(after + 1 + r.nextInt(parts.size() - after), new Part.DestinationPort(1 + r.nextInt(65535)));
        }
        if (parts.isEmpty() && target.isEmpty()) {
            parts.add(comment(r));
        }
        return new Rule(parts, target);
    }

    private static Rule randomIpvsRule(Random r, IpFamily family, Table table) {
        List<Part> parts = new ArrayList<>();
        if (r.nextBoolean()) {
            parts.add(new Part.Proto(Protocol.values()[r.nextInt(Protocol.values().length)]));
        }
        if (r.nextBoolean()) {
            parts.add(address(r, family, true));
        }
        if (r.nextBoolean()) {
            parts.add(comment(r));
        }
        if (r.nextBoolean()) {
            parts.add(new Part.SetMatch(
                    "KUBE-" + (r.nextBoolean() ? "6-" : "") + "SET-" + r.nextInt(1000),
                    List.of("dst", "dst,dst", "src,dst", "dst,dst,src").get(r.nextInt(4))));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.NotBridged());
        }
        if (r.nextInt(3) == 0) {
            parts.add(new Part.AddrType(r.nextBoolean(), r.nextBoolean()));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.Ipvs(
                    host(r, family), Protocol.values()[r.nextInt(Protocol.values().length)], 1 + r.nextInt(65535)));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.Mark(r.nextBoolean(), hex(r), hex(r)));
        }
        if (r.nextInt(4) == 0) {
            parts.add(new Part.Conntrack(r.nextBoolean(), List.of(Part.CtState.NEW)));
        }
        Collections.shuffle(parts, r);
        List<Target> targets = table == Table.NAT
                ? List.of(
                        Target.Verdict.ACCEPT,
                        Target.Verdict.RETURN,
                        new Target.Masquerade(r.nextBoolean()),
                        new Target.SetMark(r.nextBoolean(), hex(r)),
                        new Target.Jump("KUBE-MARK-MASQ"),
                        new Target.Jump("KUBE-NODE-PORT"),
                        new Target.Jump("KUBE-LOAD-BALANCER"))
                : List.of(
                        Target.Verdict.ACCEPT,
                        Target.Verdict.DROP,
                        Target.Verdict.RETURN,
                        new Target.Reject(),
                        new Target.Jump("KUBE-SOURCE-RANGES-FIREWALL"));
        return new Rule(parts, Optional.of(targets.get(r.nextInt(targets.size()))));
    }

    private static Optional<Target> randomTarget(Random r, IpFamily family, Table table) {
        if (r.nextInt(8) == 0) {
            return Optional.empty();
        }
        if (table == Table.FILTER) {
            return Optional.of(List.of(Target.Verdict.ACCEPT, Target.Verdict.DROP, new Target.Reject())
                    .get(r.nextInt(3)));
        }
        return Optional.of(
                switch (r.nextInt(6)) {
                    case 0 -> new Target.Jump(SERVICE_CHAINS.get(r.nextInt(SERVICE_CHAINS.size())));
                    case 1 -> new Target.Jump(r.nextBoolean() ? TopChains.MARK_MASQ : TopChains.NODEPORTS);
                    case 2 -> Target.Verdict.RETURN;
                    case 3 -> new Target.Dnat(host(r, family), 1 + r.nextInt(65535));
                    case 4 -> new Target.SetMark(r.nextBoolean(), hex(r));
                    default -> new Target.Masquerade(r.nextBoolean());
                });
    }

    private static Part.Address address(Random r, IpFamily family, boolean source) {
        IpAddress ip = host(r, family);
        int max = family == IpFamily.IPV4 ? 32 : 128;
        if (r.nextBoolean()) {
            return new Part.Address(source, r.nextBoolean(), Cidr.host(ip), false);
        }
        // At least the 10/8 or fd00::/16 the address is in: a wider network holds a special range (0/8, ::/16).
        int min = family == IpFamily.IPV4 ? 8 : 16;
        int prefix = min + r.nextInt(max - min + 1);
        return new Part.Address(source, r.nextBoolean(), Cidr.parse(ip + "/" + prefix), true);
    }

    /** An address outside the special ranges, which the grammar refuses as a Service address or endpoint. */
    private static IpAddress host(Random r, IpFamily family) {
        if (family == IpFamily.IPV4) {
            return IpAddress.parse("10." + r.nextInt(256) + "." + r.nextInt(256) + "." + (1 + r.nextInt(254)));
        }
        return IpAddress.parse(
                "fd00:" + Integer.toHexString(r.nextInt(0x10000)) + "::" + Integer.toHexString(1 + r.nextInt(0xfffe)));
    }

    private static Part.Comment comment(Random r) {
        boolean quoted = r.nextBoolean();
        StringBuilder sb = new StringBuilder().append((char) ('a' + r.nextInt(26)));
        int n = r.nextInt(quoted ? 60 : 20);
        String chars = quoted ? COMMENT_CHARS : COMMENT_CHARS.replace(" ", "").replace("'", "");
        for (int i = 0; i < n; i++) {
            sb.append(chars.charAt(r.nextInt(chars.length())));
        }
        return new Part.Comment(sb.toString(), quoted);
    }

    private static Hex hex(Random r) {
        long value = r.nextLong() & 0xffffffffL;
        int minDigits = Math.max(1, Long.toHexString(value).length());
        return new Hex(value, minDigits + r.nextInt(9 - minDigits));
    }
}
