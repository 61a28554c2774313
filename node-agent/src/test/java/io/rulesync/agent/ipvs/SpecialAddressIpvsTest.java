package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.apply.MemoryNetfilter;
import io.rulesync.agent.rules.IpvsRuleCheck;
import io.rulesync.exec.CommandRunner;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * IPVS mode's half of the agent's check: a real server (an endpoint) or an address bound to
 * kube-ipvs0 (a Service's address) in a special range is refused before anything reaches the
 * kernel; NodePort virtual servers on the node's own addresses are not the API server's to
 * validate and pass.
 */
class SpecialAddressIpvsTest {

    static IpvsRules rules(IpFamily family, List<String> bound, List<VirtualServer> servers) {
        TreeSet<IpAddress> b = new TreeSet<>();
        bound.forEach(s -> b.add(ip(s)));
        return new IpvsRules(family, b, servers, Map.of(), List.of(), List.of());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "127.0.0.1       | IPV4 | 127.0.0.1 is loopback",
                "169.254.169.254 | IPV4 | 169.254.169.254 is link-local",
                "0.0.0.0         | IPV4 | 0.0.0.0 is unspecified",
                "224.0.0.1       | IPV4 | 224.0.0.1 is link-local multicast",
                "::1             | IPV6 | ::1 is loopback",
                "fe80::1         | IPV6 | fe80::1 is link-local",
                "ff02::1         | IPV6 | ff02::1 is link-local multicast",
                "::ffff:127.0.0.1 | IPV6 | ::ffff:127.0.0.1 is an IPv4-mapped IPv6 address",
                "10.0.0.1        | IPV4 |",
                "8.8.8.8         | IPV4 |",
                "2001:db8::1     | IPV6 |",
            })
    void realServersAndBoundAddressesInASpecialRangeAreRefusedBeforeTheKernel(
            String address, IpFamily family, String verdict) {
        String vip = family == IpFamily.IPV4 ? "10.96.0.10" : "fd00:96::10";
        String pod = family == IpFamily.IPV4 ? "10.244.0.5" : "fd00:244::5";
        String node = family == IpFamily.IPV4
                ? "169.254.7.7"
                : "fe80::7"; // link-local node addresses are the node's business
        IpvsRules endpoint =
                rules(family, List.of(vip), List.of(tcp(vip, 80, rs(address, 8080)), tcp(node, 30080, rs(pod, 8080))));
        IpvsRules bound = rules(family, List.of(address), List.of(tcp(address, 80, rs(pod, 8080))));
        List<String> outcomes = new ArrayList<>();
        for (IpvsRules r : List.of(endpoint, bound)) {
            MemoryIpvs kernel = new MemoryIpvs();
            MemoryNetfilter netfilter = new MemoryNetfilter(family, null, "node");
            // The ipset and address steps cannot run a tool here: reaching them would fail loudly.
            CommandRunner none = (argv, stdin, timeout) -> {
                throw new java.io.IOException("no host tools in this test: " + argv);
            };
            IpvsApplier applier = new IpvsApplier(
                    List.of(netfilter),
                    kernel,
                    new IpsetSync(none),
                    new BoundAddresses(none),
                    Duration.ofMinutes(15),
                    List.of());
            IpvsApplier.Outcome o = applier.apply(Map.of(family, r), IpvsFixtures.T0, true);
            if (verdict == null) {
                assertThat(IpvsRuleCheck.addressRefusal(r)).isEmpty();
                continue;
            }
            assertThat(o.ok()).isFalse();
            assertThat(kernel.applied()).isEmpty();
            assertThat(netfilter.dump()).doesNotContain("KUBE");
            outcomes.add(o.error());
        }
        if (verdict != null) {
            String v = family.id();
            String port = family == IpFamily.IPV4 ? address + ":" : "[" + address + "]:";
            assertThat(outcomes)
                    .containsExactly(
                            "refused " + v + " IPVS configuration: real server " + port + "8080 of "
                                    + (family == IpFamily.IPV4 ? vip + ":80" : "[" + vip + "]:80") + "/TCP: " + verdict
                                    + " (the API server refuses it as an endpoint)",
                            "refused " + v + " IPVS configuration: address " + address + " on kube-ipvs0: " + verdict
                                    + " (a Service's address there would take traffic meant for the node itself)");
        }
    }
}
