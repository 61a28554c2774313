package io.rulesync.model.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.rules.RuleFragment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IpvsPartTest {
    static IpAddress ip(String s) {
        return IpAddress.parse(s);
    }

    /** A NodePort service with one endpoint on node-a, as the compiler writes it. */
    static final IpvsPart PORT = new IpvsPart(
            List.of(
                    new IpvsPart.ServiceTemplate(
                            ip("10.96.0.10"),
                            80,
                            Protocol.TCP,
                            "rr",
                            0,
                            List.of(new RealServer(ip("10.244.1.5"), 8080, 1))),
                    new IpvsPart.ServiceTemplate(
                            null, 30080, Protocol.TCP, "rr", 0, List.of(new RealServer(ip("10.244.1.5"), 8080, 1)))),
            List.of(
                    new IpvsPart.SetEntry(IpvsSet.CLUSTER_IP, "10.96.0.10,tcp:80", false),
                    new IpvsPart.SetEntry(IpvsSet.NODE_PORT_TCP, "30080", true)),
            List.of(new IpvsPart.LoopBack("node-a", "10.244.1.5,tcp:8080,10.244.1.5")),
            List.of(ip("10.96.0.10")),
            List.of(),
            List.of());

    static final IpvsPart FIXED = new IpvsPart(
            List.of(),
            List.of(),
            List.of(),
            List.of(),
            List.of(
                    new IpvsPart.Rule("nat", null, "-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN"),
                    new IpvsPart.Rule(
                            "nat",
                            IpvsSet.LOOP_BACK,
                            "-A KUBE-POSTROUTING -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE"),
                    new IpvsPart.Rule(
                            "nat",
                            IpvsSet.NODE_PORT_UDP,
                            "-A KUBE-NODE-PORT -p udp -m set --match-set KUBE-NODE-PORT-UDP dst -j KUBE-MARK-MASQ"),
                    new IpvsPart.Rule("filter", null, IpvsPart.PORT_RULES)),
            List.of(
                    new IpvsPart.NodeAddresses("node-a", List.of(ip("192.168.0.2")), List.of(ip("192.168.0.2"))),
                    new IpvsPart.NodeAddresses("node-b", List.of(ip("192.168.0.3")), List.of())));

    @Test
    void aFragmentCarriesItsIpvsPartInItsTextAndReadsItBack() {
        RuleFragment f = RuleFragment.EMPTY.withIpvs(PORT);
        assertThat(f.text())
                .endsWith("*ipvs\n"
                        + "service TCP 10.96.0.10 80 rr 0\n"
                        + "real 10.244.1.5 8080 1\n"
                        + "service TCP @node 30080 rr 0\n"
                        + "real 10.244.1.5 8080 1\n"
                        + "set always CLUSTER_IP 10.96.0.10,tcp:80\n"
                        + "set nodeport NODE_PORT_TCP 30080\n"
                        + "loopback node-a 10.244.1.5,tcp:8080,10.244.1.5\n"
                        + "bind 10.96.0.10\n");
        assertThat(RuleFragment.parse(f.text())).isEqualTo(f);
        assertThat(RuleFragment.parse(RuleFragment.EMPTY.withIpvs(FIXED).text()).ipvs())
                .isEqualTo(FIXED);
        // Fragments written before IPVS mode have no section and read back with an empty part.
        assertThat(RuleFragment.parse("*nat\n:KUBE-SVC-A\n-A KUBE-SVC-A -j RETURN\n")
                        .ipvs())
                .isEqualTo(IpvsPart.EMPTY);
    }

    @Test
    void eachNodeCompletesThePartsWithItsOwnAddressesAndEndpoints() {
        IpvsRules a = IpvsAssembly.assemble("node-a", IpFamily.IPV4, FIXED, List.of(PORT));
        assertThat(a.ipvsadmRestore()).isEqualTo("""
                -A -t 10.96.0.10:80 -s rr
                -a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1
                -A -t 192.168.0.2:30080 -s rr
                -a -t 192.168.0.2:30080 -r 10.244.1.5:8080 -m -w 1
                """);
        assertThat(a.sets())
                .containsEntry(IpvsSet.LOOP_BACK, new java.util.TreeSet<>(List.of("10.244.1.5,tcp:8080,10.244.1.5")))
                .containsEntry(IpvsSet.NODE_PORT_TCP, new java.util.TreeSet<>(List.of("30080")))
                .containsEntry(IpvsSet.IPVS_IPS, new java.util.TreeSet<>(List.of("10.96.0.10")));
        // Rules about empty sets are left out, as kube-proxy leaves them out.
        assertThat(a.natRules())
                .containsExactly(
                        "-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN",
                        "-A KUBE-POSTROUTING -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE");

        // node-b runs no endpoint and serves no NodePort address: no hairpin entry, no NodePort.
        IpvsRules b = IpvsAssembly.assemble("node-b", IpFamily.IPV4, FIXED, List.of(PORT));
        assertThat(b.virtualServers()).extracting(VirtualServer::key).containsExactly("10.96.0.10:80/TCP");
        assertThat(b.sets().get(IpvsSet.LOOP_BACK)).isEmpty();
        assertThat(b.sets().get(IpvsSet.NODE_PORT_TCP)).isEmpty();
        assertThat(b.natRules()).containsExactly("-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN");
    }

    @Test
    void anAddressAndPortClaimedTwiceGivesOneVirtualServerTheFirstServicesOne() {
        IpvsPart other = new IpvsPart(
                List.of(new IpvsPart.ServiceTemplate(
                        ip("10.96.0.10"), 80, Protocol.TCP, "lc", 0, List.of(new RealServer(ip("10.244.9.9"), 80, 1)))),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of());
        IpvsRules a = IpvsAssembly.assemble("node-b", IpFamily.IPV4, FIXED, List.of(PORT, other));
        assertThat(a.virtualServers())
                .singleElement()
                .satisfies(vs -> assertThat(vs.scheduler()).isEqualTo("rr"));
    }

    @Test
    void textThatWouldInjectIntoIpsetOrIptablesIsRefusedNamingTheLine() {
        String head = "*ipvs\n";
        assertThatThrownBy(() -> RuleFragment.parse(head + "set always CLUSTER_IP 10.96.0.10,tcp:80 -j ACCEPT\n"))
                .hasMessageContaining("line 2")
                .hasMessageContaining("set takes 3 fields");
        assertThatThrownBy(() -> RuleFragment.parse(head + "set always CLUSTER_IP 10.96.0.10,tcp:80\t-j\tACCEPT\n"))
                .hasMessageContaining("CLUSTER_IP member");
        assertThatThrownBy(() -> RuleFragment.parse(head + "set always NODE_PORT_TCP 70000\n"))
                .hasMessageContaining("NODE_PORT_TCP member");
        assertThatThrownBy(() -> RuleFragment.parse(head + "set always NODE_PORT_SCTP @node,sctp:30000\n"))
                .hasMessageContaining("needs a NodePort");
        assertThatThrownBy(() -> RuleFragment.parse(head + "service TCP 10.96.0.10 80 evil 0\n"))
                .hasMessageContaining("scheduler");
        assertThatThrownBy(() -> RuleFragment.parse(head + "service TCP 10.96.0.10 0 rr 0\n"))
                .hasMessageContaining("port: 0 is out of range");
        assertThatThrownBy(() -> RuleFragment.parse(head + "real 10.0.0.1 80 1\n"))
                .hasMessageContaining("outside a service");
        assertThatThrownBy(() -> RuleFragment.parse(head + "rule nat - -I INPUT -j ACCEPT\n"))
                .hasMessageContaining("KUBE- chain");
        assertThatThrownBy(() -> RuleFragment.parse(head + "rule raw - -A KUBE-X -j ACCEPT\n"))
                .hasMessageContaining("not nat or filter");
        assertThatThrownBy(() -> RuleFragment.parse(head + "loopback Node_A 10.0.0.1,tcp:80,10.0.0.1\n"))
                .hasMessageContaining("node");
        assertThatThrownBy(() -> RuleFragment.parse(head + "node node-a 10.0.0.1;reboot -\n"))
                .hasMessageContaining("line 2");
        assertThatThrownBy(() -> RuleFragment.parse(head + "flush all\n")).hasMessageContaining("unknown entry");
    }

    @Test
    void membersMustHaveTheFormOfTheirSetType() {
        Map<IpvsSet, String> good = Map.of(
                IpvsSet.LOOP_BACK,
                "10.0.0.1,udp:53,10.0.0.1",
                IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                "203.0.113.7,tcp:443,10.0.0.0/8",
                IpvsSet.IPVS_IPS,
                "fd00::1",
                IpvsSet.HEALTH_CHECK_NODE_PORT,
                "32000",
                IpvsSet.NODE_PORT_SCTP,
                "192.168.0.2,sctp:30000");
        good.forEach((set, member) ->
                assertThat(set.checkMember(member)).as(set + " " + member).isNull());
        assertThat(IpvsSet.CLUSTER_IP.checkMember("10.0.0.1,icmp:80")).contains("hash:ip,port");
        assertThat(IpvsSet.IPVS_IPS.checkMember("10.0.0.1,tcp:80")).contains("hash:ip");
        assertThat(IpvsSet.LOAD_BALANCER_SOURCE_CIDR.checkMember("203.0.113.7,tcp:443,10.0.0.0/99"))
                .isNotNull();
    }
}
