package io.rulesync.model.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Table;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RuleGrammarTest {
    private static final String SVC = "KUBE-SVC-XPGD46QRK7WJZT7O";
    private static final String SEP = "KUBE-SEP-SXIVWICOYRO3J4NJ";

    private static Rule nat(String chain, String body) {
        return RuleGrammar.parse(Table.NAT, IpFamily.IPV4, chain, body);
    }

    private static String natKernel(String chain, String body) {
        return kernel(Table.NAT, IpFamily.IPV4, chain, body);
    }

    private static String kernel(Table table, IpFamily family, String chain, String body) {
        return RuleGrammar.parse(table, family, chain, body).kernelForm(family, chain);
    }

    private static RejectedRuleException rejected(Table table, IpFamily family, String chain, String body) {
        RejectedRuleException e =
                catchThrowableOfType(() -> RuleGrammar.parse(table, family, chain, body), RejectedRuleException.class);
        assertThat(e).as("expected a rejection of: %s", body).isNotNull();
        assertThat(e.getMessage()).startsWith(table.restoreName() + " chain " + chain + ": ");
        return e;
    }

    private static RejectedRuleException rejectedNat(String body) {
        return rejected(Table.NAT, IpFamily.IPV4, "KUBE-SERVICES", body);
    }

    // ---- parsing ----

    @Test
    void parsesAClusterIpRuleIntoItsParts() {
        Rule r = nat(
                "KUBE-SERVICES",
                "-m comment --comment \"ns1/svc1:p80 cluster IP\" -m tcp -p tcp" + " -d 172.30.0.41 --dport 80 -j "
                        + SVC);
        assertThat(r.source()).isEmpty();
        assertThat(r.destination()).contains(new Part.Address(false, false, Cidr.parse("172.30.0.41/32"), false));
        assertThat(r.protocol()).contains(Protocol.TCP);
        assertThat(r.destinationPort()).hasValue(80);
        assertThat(r.parts())
                .containsExactly(
                        new Part.Comment("ns1/svc1:p80 cluster IP", true),
                        new Part.PortMatch(Protocol.TCP),
                        new Part.Proto(Protocol.TCP),
                        new Part.Address(false, false, Cidr.parse("172.30.0.41/32"), false),
                        new Part.DestinationPort(80));
        assertThat(r.target()).contains(new Target.Jump(SVC));
        assertThat(r.kernelForm(IpFamily.IPV4, "KUBE-SERVICES"))
                .isEqualTo("-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment"
                        + " \"ns1/svc1:p80 cluster IP\" -m tcp --dport 80 -j " + SVC);
    }

    @Test
    void parsesTheEndpointRulesWithAffinity() {
        Rule r = nat(
                SEP,
                "-m comment --comment ns5/svc5:p80 -m recent --name " + SEP
                        + " --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80");
        assertThat(r.matches())
                .containsExactly(
                        new Part.Comment("ns5/svc5:p80", false),
                        Part.Recent.remember(SEP),
                        new Part.PortMatch(Protocol.TCP));
        assertThat(r.target()).contains(new Target.Dnat(IpAddress.parse("10.180.0.3"), 80));
        assertThat(r.kernelForm(IpFamily.IPV4, SEP))
                .isEqualTo("-A " + SEP + " -p tcp -m comment --comment \"ns5/svc5:p80\""
                        + " -m recent --set --name " + SEP + " --mask 255.255.255.255 --rsource -m tcp"
                        + " -j DNAT --to-destination 10.180.0.3:80");
    }

    @Test
    void aRuleWithOnlyACommentHasNoTarget() {
        Rule r = RuleGrammar.parse(
                Table.NAT,
                IpFamily.IPV4,
                "KUBE-FW-NUKIZ6OKUXPJNT4C",
                "-m comment --comment \"other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL\"");
        assertThat(r.target()).isEmpty();
    }

    @Test
    void kernelFormsOfTheFixedRules() {
        assertThat(natKernel("KUBE-MARK-MASQ", "-j MARK --or-mark 0x4000"))
                .isEqualTo("-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000");
        assertThat(natKernel("KUBE-POSTROUTING", "-j MARK --xor-mark 0x00004000"))
                .isEqualTo("-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0");
        assertThat(natKernel("KUBE-POSTROUTING", "-m mark ! --mark 0x00004000/0x00004000 -j RETURN"))
                .isEqualTo("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN");
        assertThat(kernel(
                        Table.FILTER,
                        IpFamily.IPV4,
                        "KUBE-FIREWALL",
                        "-m comment --comment \"block incoming localnet connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8"
                                + " -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP"))
                .isEqualTo(
                        "-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment"
                                + " \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP");
    }

    @Test
    void rejectSpellsOutTheReplyPerFamily() {
        String body = "-m comment --comment \"ns/s:p has no endpoints\" -m tcp -p tcp -d %s --dport 80 -j REJECT";
        assertThat(kernel(Table.FILTER, IpFamily.IPV4, "KUBE-SERVICES", body.formatted("10.0.0.1")))
                .endsWith("-j REJECT --reject-with icmp-port-unreachable");
        assertThat(kernel(Table.FILTER, IpFamily.IPV6, "KUBE-SERVICES", body.formatted("fd00::1")))
                .endsWith("-j REJECT --reject-with icmp6-port-unreachable");
    }

    @ParameterizedTest
    @CsvSource({
        "0.5000000000, 0.50000000000",
        "0.3333333333, 0.33333333349",
        "0.2500000000, 0.25000000000",
        "0.1428571429, 0.14285714272",
        "0.0010000000, 0.00100000016",
        // round(p * 2^31) = 2^19 exactly, and 2^19 / 2^31 = 0.000244140625: printf rounds half to even.
        "0.0002441406, 0.00024414062",
        "0.0000000001, 0.00000000000",
        "0.9999999999, 1.00000000000",
    })
    void probabilityIsPrintedAsTheKernelStoresIt(String written, String printed) {
        assertThat(natKernel(SVC, "-m statistic --mode random --probability " + written + " -j " + SEP))
                .isEqualTo("-A " + SVC + " -m statistic --mode random --probability " + printed + " -j " + SEP);
    }

    @Test
    void commentsAreQuotedOnlyWhenTheyNeedIt() {
        assertThat(natKernel(SEP, "-m comment --comment abc_D-1 -j KUBE-MARK-MASQ"))
                .isEqualTo("-A " + SEP + " -m comment --comment abc_D-1 -j KUBE-MARK-MASQ");
        assertThat(natKernel(SEP, "-m comment --comment ns/s:p -j KUBE-MARK-MASQ"))
                .isEqualTo("-A " + SEP + " -m comment --comment \"ns/s:p\" -j KUBE-MARK-MASQ");
    }

    @Test
    void addressesAreNormalisedLikeTheKernel() {
        assertThat(natKernel(SEP, "-s 0.0.0.0/0 -j KUBE-MARK-MASQ")).isEqualTo("-A " + SEP + " -j KUBE-MARK-MASQ");
        Rule v6 = RuleGrammar.parse(
                Table.NAT, IpFamily.IPV6, SEP, "-s ::1:2 -m tcp -p tcp -j DNAT --to-destination [::1:2]:80");
        assertThat(v6.kernelForm(IpFamily.IPV6, SEP))
                .isEqualTo("-A " + SEP + " -s ::0.1.0.2/128 -p tcp -m tcp -j DNAT --to-destination [::0.1.0.2]:80");
        assertThat(RuleGrammar.parse(Table.NAT, IpFamily.IPV6, SEP, "-s ff06::c1 -j KUBE-MARK-MASQ")
                        .source())
                .contains(new Part.Address(true, false, Cidr.parse("ff06::c1/128"), false));
    }

    @Test
    void checksWholeChainsAndRuleSets() {
        Chain chain = new Chain(SVC, List.of("-m comment --comment \"a/b:c -> 10.0.0.1:80\" -j " + SEP));
        assertThat(RuleGrammar.check(Table.NAT, IpFamily.IPV4, chain)).hasSize(1);
        assertThat(KernelListing.of(Table.NAT, IpFamily.IPV4, chain))
                .containsExactly("-N " + SVC, "-A " + SVC + " -m comment --comment \"a/b:c -> 10.0.0.1:80\" -j " + SEP);
        assertThat(KernelListing.of(Table.NAT, IpFamily.IPV4, new Chain(SEP, List.of())))
                .containsExactly("-N " + SEP);

        RuleSet twice = new RuleSet(IpFamily.IPV4, List.of(), List.of(chain, chain));
        RejectedRuleException e = catchThrowableOfType(() -> RuleGrammar.check(twice), RejectedRuleException.class);
        assertThat(e).hasMessage("nat chain " + SVC + ": the chain is declared twice");
    }

    // ---- rejection ----

    @Test
    void namesTheRuleNumberOfTheBadRule() {
        Chain chain = new Chain(SEP, List.of("-j KUBE-MARK-MASQ", "-j KUBE-MARK-MASQ", "-j KUBE-MARK-MASQ --foo 1"));
        RejectedRuleException e = catchThrowableOfType(
                () -> RuleGrammar.check(Table.NAT, IpFamily.IPV4, chain), RejectedRuleException.class);
        assertThat(e.getMessage())
                .isEqualTo("nat chain " + SEP + ": rule 3: option --foo after -j KUBE-MARK-MASQ"
                        + " is not one rulesync emits there");
        assertThat(e.table()).isEqualTo(Table.NAT);
        assertThat(e.chain()).isEqualTo(SEP);
        assertThat(e.ruleNumber()).isEqualTo(3);
        assertThat(e.problem()).contains("--foo");
    }

    @Test
    void aQuoteInsideACommentCannotEndIt() {
        RejectedRuleException e = rejectedNat("-m comment --comment \"a\"b\" -j " + SVC);
        assertThat(e.getMessage()).contains("after --comment").contains("'b'");
        e = rejectedNat("-m comment --comment \"a\\\" -j ACCEPT -m comment --comment \"x\" -j " + SVC);
        assertThat(e.getMessage()).contains("'\\'").contains("after --comment");
        e = rejectedNat("-m comment --comment a\"b -j " + SVC);
        assertThat(e.getMessage()).contains("'\"'").contains("after --comment");
    }

    @Test
    void aNewlineCannotStartAnotherRule() {
        RejectedRuleException e = rejectedNat("-m comment --comment \"x\n-A INPUT -j ACCEPT\" -j " + SVC);
        assertThat(e.getMessage()).contains("\\x0a").contains("after --comment");
        e = rejectedNat("-j " + SVC + "\n-A INPUT -j ACCEPT");
        assertThat(e.getMessage()).contains("\\x0a").contains("after -j");
        e = rejectedNat("-m comment --comment \"x\r\" -j " + SVC);
        assertThat(e.getMessage()).contains("\\x0d");
    }

    @Test
    void commentsHaveASafeCharacterSetAndLength() {
        assertThat(rejectedNat("-m comment --comment it's -j " + SVC).getMessage())
                .contains("'''")
                .contains("is not allowed");
        assertThatCode(() -> nat(SVC, "-m comment --comment \"it's a=b, c+d\" -j " + SEP))
                .doesNotThrowAnyException();
        assertThat(rejectedNat("-m comment --comment \"a*b\" -j " + SVC).getMessage())
                .contains("--comment 'a*b'");
        assertThat(rejectedNat("-m comment --comment \"-A INPUT -j ACCEPT\" -j " + SVC)
                        .getMessage())
                .contains("--comment '-A INPUT -j ACCEPT'");
        assertThat(rejectedNat("-m comment --comment \"\" -j " + SVC).getMessage())
                .contains("--comment ''");
        assertThat(rejectedNat("-m comment --comment \"é\" -j " + SVC).getMessage())
                .contains("\\xe9");
        assertThat(rejectedNat("-m comment --comment " + "a".repeat(256) + " -j " + SVC)
                        .getMessage())
                .contains("--comment: 256 characters");
        assertThatCode(() -> nat("KUBE-SERVICES", "-m comment --comment " + "a".repeat(255) + " -j " + SVC))
                .doesNotThrowAnyException();
    }

    @Test
    void unknownOptionsAndModulesAreRefused() {
        assertThat(rejectedNat("-m tcp -p tcp --foo 1 -j " + SVC).getMessage())
                .endsWith("option --foo is not one rulesync emits");
        assertThat(rejectedNat("-m string --string x -j " + SVC).getMessage())
                .contains("match -m string is not one rulesync emits");
        assertThat(rejectedNat("-m tcp -p tcp --sport 80 -j " + SVC).getMessage())
                .contains("--sport");
        assertThat(rejectedNat("-i eth0 -j " + SVC).getMessage()).contains("'-i'");
        assertThat(rejectedNat("-m tcp -p tcp -d 10.0.0.1 --dport 80 -j " + SVC + " -d 10.0.0.2")
                        .getMessage())
                .contains("-d after -j " + SVC);
        assertThat(rejectedNat("-p tcp --dport 80 -j " + SVC).getMessage())
                .contains("--dport without -m tcp, -m udp or -m sctp before it");
        assertThat(rejectedNat("-m comment --comment x ! --comment y -j " + SVC).getMessage())
                .contains("'!' before --comment");
        assertThat(rejectedNat("-j MARK --set-xmark 0x4000/0x4000").getMessage())
                .contains("--set-xmark");
        assertThat(rejectedNat("-m recent --name " + SEP + " --set --rsource -j " + SEP)
                        .getMessage())
                .contains("--rsource");
    }

    @Test
    void jumpsOnlyToChainsRulesyncOwns() {
        assertThat(rejectedNat("-j FOO").getMessage()).contains("-j FOO: it is not a chain rulesync owns");
        assertThat(rejectedNat("-j KUBE-SVC-lowercase0000000").getMessage()).contains("-j KUBE-SVC-lowercase0000000");
        assertThat(rejectedNat("-j KUBE-SVC-XPGD46QRK7WJZT7O1").getMessage()).contains("-j KUBE-SVC-XPGD46QRK7WJZT7O1");
        assertThat(rejectedNat("-j KUBE-SERVICES").getMessage()).contains("-j KUBE-SERVICES");
        assertThat(rejectedNat("-j ACCEPT").getMessage())
                .contains("-j ACCEPT: rulesync does not use it in the nat table");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-j DNAT --to-destination 10.0.0.1:80")
                        .getMessage())
                .contains("-j DNAT: rulesync does not use it in the filter table");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-j " + SVC)
                        .getMessage())
                .contains("-j " + SVC);
        assertThat(rejectedNat("-j " + SVC + " -j " + SEP).getMessage()).contains("-j after -j " + SVC);
    }

    @Test
    void addressesAreChecked() {
        assertThat(rejectedNat("-d 10.0.0.300 -j " + SVC).getMessage()).contains("-d 10.0.0.300");
        assertThat(rejectedNat("-d 10.0.0.1/33 -j " + SVC).getMessage()).contains("-d 10.0.0.1/33");
        assertThat(rejectedNat("-s 10.1.2.3/8 -j " + SVC).getMessage())
                .contains("-s 10.1.2.3/8: not in canonical form");
        assertThat(rejectedNat("-s 010.0.0.1 -j " + SVC).getMessage()).contains("-s 010.0.0.1");
        assertThat(rejectedNat("-s example.com -j " + SVC).getMessage()).contains("-s example.com");
        assertThat(rejectedNat("-d fd00::1 -j " + SVC).getMessage())
                .contains("-d fd00::1: an ipv6 address in an ipv4 rule set");
        assertThat(rejected(Table.NAT, IpFamily.IPV6, "KUBE-SERVICES", "-d FD00::1 -j " + SVC)
                        .getMessage())
                .contains("-d FD00::1: not in canonical form (expected fd00::1)");
        assertThat(rejectedNat("! -s 0.0.0.0/0 -j " + SVC).getMessage()).contains("! -s 0.0.0.0/0");
        assertThat(rejectedNat("-d 10.0.0.1 -d 10.0.0.2 -j " + SVC).getMessage())
                .contains("-d appears twice");
        assertThat(rejectedNat("-d \"10.0.0.1\" -j " + SVC).getMessage()).contains("-d \"10.0.0.1\"");
    }

    @ParameterizedTest
    @CsvSource({"0", "70000", "65536", "080", "-1", "8o", "http"})
    void portsAreChecked(String port) {
        assertThat(rejectedNat("-m tcp -p tcp -d 10.0.0.1 --dport " + port + " -j " + SVC)
                        .getMessage())
                .contains("--dport " + port + ": not a number in 1-65535");
    }

    @Test
    void dnatDestinationsAreChecked() {
        String rule = "-m tcp -p tcp -j DNAT --to-destination ";
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SEP, rule + "10.0.0.1:0").getMessage())
                .contains("--to-destination port 0");
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SEP, rule + "10.0.0.1").getMessage())
                .contains("--to-destination 10.0.0.1: expected IPv4:PORT");
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SEP, rule + "10.0.0.1:80-90")
                        .getMessage())
                .contains("--to-destination port 80-90");
        assertThat(rejected(Table.NAT, IpFamily.IPV6, SEP, rule + "fd00::1:80").getMessage())
                .contains("--to-destination fd00::1:80: expected [IPv6]:PORT");
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SEP, "-j DNAT --to-destination 10.0.0.1:80")
                        .getMessage())
                .contains("--to-destination 10.0.0.1:80: a destination port needs -p");
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SEP, "-m tcp -p tcp -j DNAT")
                        .getMessage())
                .contains("-j DNAT without --to-destination");
    }

    @ParameterizedTest
    @CsvSource({"2", "1.5000000000", "0.0000000000", "0", "1e-1", ".5", "0.50000000000", "-0.5", "NaN", "0x1p-1"})
    void probabilitiesAreChecked(String p) {
        assertThat(rejected(
                                Table.NAT,
                                IpFamily.IPV4,
                                SVC,
                                "-m statistic --mode random --probability " + p + " -j " + SEP)
                        .getMessage())
                .contains("--probability " + p);
    }

    @Test
    void matchValuesAreChecked() {
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SVC, "-m statistic --mode nth --probability 0.5 -j " + SEP)
                        .getMessage())
                .contains("--mode nth");
        assertThat(rejected(
                                Table.NAT,
                                IpFamily.IPV4,
                                SVC,
                                "-m recent --name FOO --rcheck --seconds 10 --reap -j " + SEP)
                        .getMessage())
                .contains("--name FOO");
        assertThat(rejected(
                                Table.NAT,
                                IpFamily.IPV4,
                                SVC,
                                "-m recent --name " + SEP + " --rcheck --seconds 0 --reap -j " + SEP)
                        .getMessage())
                .contains("--seconds 0");
        assertThat(rejected(
                                Table.NAT,
                                IpFamily.IPV4,
                                SVC,
                                "-m recent --name " + SEP + " --rcheck --seconds 86401 --reap -j " + SEP)
                        .getMessage())
                .contains("--seconds 86401");
        assertThat(rejected(Table.NAT, IpFamily.IPV4, SVC, "-m recent --name " + SEP + " --set --rcheck -j " + SEP)
                        .getMessage())
                .contains("exactly one of --set and --rcheck");
        assertThat(rejectedNat("-m addrtype --dst-type BROADCAST -j KUBE-NODEPORTS")
                        .getMessage())
                .contains("--dst-type BROADCAST");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-m mark --mark 0x4000 -j ACCEPT")
                        .getMessage())
                .contains("--mark 0x4000: rulesync emits VALUE/MASK");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-m mark --mark 0x100000000/0x1 -j ACCEPT")
                        .getMessage())
                .contains("--mark 0x100000000");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-m conntrack --ctstate BOGUS -j ACCEPT")
                        .getMessage())
                .contains("'BOGUS' is not a conntrack state");
        assertThat(rejected(Table.FILTER, IpFamily.IPV4, "KUBE-FORWARD", "-m conntrack --ctstate NEW,,NEW -j ACCEPT")
                        .getMessage())
                .contains("--ctstate");
        assertThat(rejectedNat("-m tcp -p udp -d 10.0.0.1 --dport 53 -j " + SVC).getMessage())
                .contains("-m tcp needs -p tcp, not -p udp");
        assertThat(rejectedNat("-p tcp -d 10.0.0.1 -j " + SVC).getMessage()).contains("-p tcp without -m tcp");
        assertThat(rejectedNat("-m tcp -m udp -p tcp -j " + SVC).getMessage()).contains("-m udp after -m tcp");
        assertThat(rejectedNat("-m tcp -p icmp -j " + SVC).getMessage()).contains("-p icmp");
        assertThat(rejectedNat("-m comment -j " + SVC).getMessage()).contains("-m comment without --comment");
        assertThat(rejectedNat("-j MARK --or-mark 0x4000 --xor-mark 0x4000").getMessage())
                .contains("-j MARK needs exactly one");
        assertThat(rejectedNat("-j MARK --or-mark 4000").getMessage()).contains("--or-mark 4000");
    }

    @Test
    void whitespaceIsExactlyWhatTheCompilerWrites() {
        assertThat(rejectedNat("-j  " + SVC).getMessage()).contains("a stray space after -j");
        assertThat(rejectedNat(" -j " + SVC).getMessage()).contains("a stray space at the start");
        assertThat(rejectedNat("-j " + SVC + " ").getMessage()).contains("a trailing space after " + SVC);
        assertThat(rejectedNat("-j\t" + SVC).getMessage()).contains("\\x09");
        assertThat(rejectedNat("").getMessage()).contains("the rule is empty");
        assertThat(rejectedNat("-m comment --comment \"unterminated -j " + SVC).getMessage())
                .contains("an unterminated quoted value after --comment");
        assertThat(rejectedNat("\"-j\" " + SVC).getMessage()).contains("a quoted value \"-j\"");
    }

    @Test
    void chainNamesAreKubeProxys() {
        for (String ok : List.of(
                "KUBE-SERVICES",
                "KUBE-NODEPORTS",
                "KUBE-POSTROUTING",
                "KUBE-MARK-MASQ",
                SVC,
                SEP,
                "KUBE-SVL-XPGD46QRK7WJZT7O",
                "KUBE-EXT-XPGD46QRK7WJZT7O",
                "KUBE-FW-XPGD46QRK7WJZT7O")) {
            assertThatCode(() -> RuleGrammar.checkChainName(Table.NAT, ok)).doesNotThrowAnyException();
        }
        for (String ok : List.of(
                "KUBE-SERVICES",
                "KUBE-EXTERNAL-SERVICES",
                "KUBE-FORWARD",
                "KUBE-NODEPORTS",
                "KUBE-PROXY-FIREWALL",
                "KUBE-FIREWALL")) {
            assertThatCode(() -> RuleGrammar.checkChainName(Table.FILTER, ok)).doesNotThrowAnyException();
        }
        for (String bad : List.of(
                "FOO",
                "INPUT",
                "KUBE-FORWARD",
                "KUBE-SVC-XPGD46QRK7WJZT7",
                "KUBE-SVC-XPGD46QRK7WJZT70",
                "KUBE-SVC-XPGD46QRK7WJZT7O\n-A",
                "KUBE-XYZ-XPGD46QRK7WJZT7O",
                "")) {
            RejectedRuleException e =
                    catchThrowableOfType(() -> RuleGrammar.checkChainName(Table.NAT, bad), RejectedRuleException.class);
            assertThat(e).as(bad).isNotNull();
            assertThat(e.getMessage())
                    .contains("chain name '" + bad.replace("\n", "\\x0a")
                            + "' is not one rulesync owns in the nat table");
        }
        assertThat(catchThrowableOfType(
                        () -> RuleGrammar.checkChainName(Table.FILTER, SVC), RejectedRuleException.class))
                .hasMessage("filter chain " + SVC + ": chain name '" + SVC
                        + "' is not one rulesync owns in the filter table");
        RejectedRuleException e = catchThrowableOfType(
                () -> RuleGrammar.check(Table.NAT, IpFamily.IPV4, new Chain("FOO", List.of("-j KUBE-MARK-MASQ"))),
                RejectedRuleException.class);
        assertThat(e).hasMessage("nat chain FOO: chain name 'FOO' is not one rulesync owns in the nat table");
        assertThat(e.ruleNumber()).isZero();
        assertThat(rejected(Table.NAT, IpFamily.IPV4, "FOO", "-j KUBE-MARK-MASQ")
                        .getMessage())
                .contains("'FOO'");
    }

    @Test
    void parsedRulesAreValues() {
        String body =
                "-m comment --comment \"a/b:c cluster IP\" -m tcp -p tcp -d 10.0.0.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ";
        assertThat(nat(SVC, body)).isEqualTo(nat(SVC, body));
        assertThat(nat(SVC, body).source())
                .isEqualTo(Optional.of(new Part.Address(true, true, Cidr.parse("10.0.0.0/8"), true)));
    }
}
