package io.rulesync.agent.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.AddressType;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.Endpoint;
import io.rulesync.model.cluster.EndpointPort;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServicePort;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.iptables.RuleGrammar;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.Table;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent's half of the special-address probe: whatever a delta says, no rule reaches iptables-restore that
 * DNATs to, or captures a Service's traffic at, an address in a special range, for either family;
 * the addresses next to them, and the fixed rules that legitimately name loopback, still pass.
 */
class SpecialAddressRulesTest {
    private static final String SVC = "KUBE-SVC-XPGD46QRK7WJZT7O";
    private static final String EXT = "KUBE-EXT-XPGD46QRK7WJZT7O";
    private static final String SEP = "KUBE-SEP-SXIVWICOYRO3J4NJ";

    record Address(String text, IpFamily family, String verdict) {
        /** As the rule writes it with a port: {@code 10.0.0.1:8080}, {@code [fd00::1]:8080}. */
        String withPort() {
            return family == IpFamily.IPV6 ? "[" + text + "]:8080" : text + ":8080";
        }

        @Override
        public String toString() {
            return text;
        }
    }

    static final List<Address> ADDRESSES = List.of(
            new Address("127.0.0.1", IpFamily.IPV4, "is loopback"),
            new Address("127.0.0.53", IpFamily.IPV4, "is loopback"),
            new Address("169.254.169.254", IpFamily.IPV4, "is link-local"),
            new Address("0.0.0.0", IpFamily.IPV4, "is unspecified"),
            new Address("224.0.0.1", IpFamily.IPV4, "is link-local multicast"),
            new Address("::1", IpFamily.IPV6, "is loopback"),
            new Address("fe80::1", IpFamily.IPV6, "is link-local"),
            new Address("::", IpFamily.IPV6, "is unspecified"),
            new Address("ff02::1", IpFamily.IPV6, "is link-local multicast"),
            new Address("::ffff:127.0.0.1", IpFamily.IPV6, "is an IPv4-mapped IPv6 address"),
            new Address("::ffff:10.0.0.1", IpFamily.IPV6, "is an IPv4-mapped IPv6 address"),
            new Address("10.0.0.1", IpFamily.IPV4, null),
            new Address("8.8.8.8", IpFamily.IPV4, null),
            new Address("224.0.1.1", IpFamily.IPV4, null),
            new Address("2001:db8::1", IpFamily.IPV6, null),
            new Address("fd00:10::1", IpFamily.IPV6, null));

    /** A rule with the address in it, where it goes, and how the refusal names the value. */
    record Place(String name, Table table, String chain, String rule, String named, String why) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final String CAPTURE = "a Service's address there would capture traffic meant for the node itself";

    static final List<Place> PLACES = List.of(
            new Place(
                    "an endpoint (DNAT)",
                    Table.NAT,
                    SEP,
                    "-m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination ADDR_PORT",
                    "--to-destination ADDR_PORT",
                    "the API server refuses it as an endpoint"),
            new Place(
                    "an endpoint with affinity (DNAT)",
                    Table.NAT,
                    SEP,
                    "-m comment --comment ns1/svc1:p80 -m recent --name " + SEP
                            + " --set -m tcp -p tcp -j DNAT --to-destination ADDR_PORT",
                    "--to-destination ADDR_PORT",
                    "the API server refuses it as an endpoint"),
            new Place(
                    "a ClusterIP",
                    Table.NAT,
                    "KUBE-SERVICES",
                    "-m comment --comment \"ns1/svc1:p80 cluster IP\" -m tcp -p tcp -d ADDR --dport 80 -j " + SVC,
                    "-d ADDR",
                    CAPTURE),
            new Place(
                    "an external IP",
                    Table.NAT,
                    "KUBE-SERVICES",
                    "-m comment --comment \"ns1/svc1:p80 external IP\" -m tcp -p tcp -d ADDR --dport 80 -j " + EXT,
                    "-d ADDR",
                    CAPTURE),
            new Place(
                    "a REJECT for a Service without endpoints",
                    Table.FILTER,
                    "KUBE-EXTERNAL-SERVICES",
                    "-m comment --comment \"ns1/svc1:p80 has no endpoints\" -m tcp -p tcp -d ADDR --dport 80 -j REJECT",
                    "-d ADDR",
                    CAPTURE),
            new Place(
                    "a load-balancer firewall DROP",
                    Table.FILTER,
                    "KUBE-PROXY-FIREWALL",
                    "-m comment --comment \"ns1/svc1:p80 traffic not accepted by KUBE-FW-XPGD46QRK7WJZT7O\" -m tcp -p tcp"
                            + " -d ADDR --dport 80 -j DROP",
                    "-d ADDR",
                    CAPTURE));

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Place p : PLACES) {
            for (Address a : ADDRESSES) {
                out.add(Arguments.of(p, a));
            }
        }
        return out.stream();
    }

    private static String fill(String s, Address a) {
        return s.replace("ADDR_PORT", a.withPort()).replace("ADDR", a.text());
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("cases")
    void noRuleSendsTrafficToOrCapturesItAtASpecialAddress(Place place, Address a) {
        String rule = fill(place.rule(), a);
        if (a.verdict() == null) {
            assertThatCode(() -> RuleGrammar.parse(place.table(), a.family(), place.chain(), rule))
                    .doesNotThrowAnyException();
            return;
        }
        RejectedRuleException e = catchThrowableOfType(
                () -> RuleGrammar.parse(place.table(), a.family(), place.chain(), rule), RejectedRuleException.class);
        assertThat(e).as("expected a refusal of %s", rule).isNotNull();
        assertThat(e.chain()).isEqualTo(place.chain());
        assertThat(e.problem())
                .isEqualTo(fill(place.named(), a) + ": " + a.text() + " " + a.verdict() + " (" + place.why() + ")");
    }

    /** kube-proxy's own rules that name loopback: localhost NodePorts, their exclusion, and the martian guard. */
    @Test
    void theFixedRulesThatNameLoopbackStillPass() {
        String nodePorts =
                "-m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" ";
        assertThatCode(() -> {
                    RuleGrammar.parse(
                            Table.NAT, IpFamily.IPV4, "KUBE-SERVICES", nodePorts + "-d 127.0.0.1 -j KUBE-NODEPORTS");
                    RuleGrammar.parse(
                            Table.NAT, IpFamily.IPV4, "KUBE-SERVICES", nodePorts + "-d 169.254.3.4 -j KUBE-NODEPORTS");
                    RuleGrammar.parse(
                            Table.NAT,
                            IpFamily.IPV4,
                            "KUBE-SERVICES",
                            nodePorts + "-m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS");
                    RuleGrammar.parse(
                            Table.NAT,
                            IpFamily.IPV6,
                            "KUBE-SERVICES",
                            nodePorts + "-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS");
                    RuleGrammar.parse(
                            Table.FILTER,
                            IpFamily.IPV4,
                            "KUBE-FIREWALL",
                            "-m comment --comment \"block incoming localnet"
                                    + " connections\" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP");
                })
                .doesNotThrowAnyException();
    }

    /**
     * What an older compiler (or anyone writing the deltas topic) would send: the real compiler's
     * fragments for objects that bypassed the decoder. Each fragment with a special address is refused.
     */
    @Test
    void theCompilersRulesForObjectsThatBypassedTheDecoderAreRefused() {
        Node node = new Node("n1", "", List.of(new Node.NodeAddress("InternalIP", IpAddress.parse("192.168.0.2"))));
        Service metadata = service("metadata", "10.96.0.10", List.of());
        Service external = service("external", "10.96.0.11", List.of(IpAddress.parse("169.254.169.254")));
        Service fine = service("fine", "10.96.0.12", List.of());
        ClusterState state = ClusterState.of(
                List.of(metadata, external, fine),
                List.of(
                        slice("metadata", "169.254.169.254"),
                        slice("external", "10.244.0.5"),
                        slice("fine", "10.244.0.6")),
                List.of(node));
        ClusterRules rules =
                ClusterCompiler.compile(state, ClusterSettings.DEFAULT).rules();
        List<String> refused = new ArrayList<>();
        for (Map.Entry<FragmentKey, RuleFragment> e : rules.fragments().entrySet()) {
            try {
                FragmentCheck.check(e.getKey().family(), e.getValue());
            } catch (RejectedRuleException x) {
                refused.add(e.getKey().unit().id() + ": " + x.getMessage());
            }
        }
        assertThat(refused)
                .containsExactly(
                        "shop/external:http/TCP: nat chain KUBE-SERVICES: rule 2: -d 169.254.169.254: 169.254.169.254 is link-local ("
                                + CAPTURE + ")",
                        "shop/metadata:http/TCP: nat chain KUBE-SEP-"
                                + refused.get(1).replaceAll(".*KUBE-SEP-([A-Z2-7]{16}).*", "$1")
                                + ": rule 2: --to-destination 169.254.169.254:8080: 169.254.169.254 is link-local"
                                + " (the API server refuses it as an endpoint)");
    }

    static Service service(String name, String clusterIP, List<IpAddress> externalIPs) {
        return new Service(
                new NamespacedName("shop", name),
                ServiceType.CLUSTER_IP,
                List.of(IpAddress.parse(clusterIP)),
                List.of(new ServicePort("http", Protocol.TCP, 80, 0)),
                externalIPs,
                List.of(),
                List.of(),
                TrafficPolicy.CLUSTER,
                TrafficPolicy.CLUSTER,
                0,
                0,
                false);
    }

    static EndpointSlice slice(String service, String address) {
        return new EndpointSlice(
                new NamespacedName("shop", service + "-1"),
                service,
                AddressType.IPV4,
                List.of(new EndpointPort("http", Protocol.TCP, 8080)),
                List.of(new Endpoint(IpAddress.parse(address), true, true, false, "n1", "", Set.of(), Set.of())),
                false);
    }
}
