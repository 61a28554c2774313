package io.rulesync.compiler.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.compiler.iptables.GoldenCase;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IpvsCompilerTest {
    private static final Path SHOP = GoldenCase.ROOT.resolve("ipvs/shop");

    @Test
    void theSameStateGivesTheSameTextWhateverOrderItArrivedIn() throws Exception {
        GoldenCase c = GoldenCase.load(SHOP);
        IpvsRules reference = IpvsCompiler.compile(c.state(), c.node(), c.settings(), "rr");
        Random r = new Random(11);
        for (int i = 0; i < 20; i++) {
            List<Object> objects = new ArrayList<>();
            objects.addAll(c.state().services());
            objects.addAll(c.state().endpointSlices());
            objects.addAll(c.state().nodes());
            Collections.shuffle(objects, r);
            ClusterState shuffled = ClusterState.empty();
            for (Object o : objects) {
                shuffled = o instanceof io.rulesync.model.cluster.Service s
                        ? shuffled.withService(s)
                        : o instanceof io.rulesync.model.cluster.EndpointSlice e
                                ? shuffled.withEndpointSlice(e)
                                : shuffled.withNode((io.rulesync.model.cluster.Node) o);
            }
            IpvsRules again = IpvsCompiler.compile(shuffled, c.node(), c.settings(), "rr");
            assertThat(again.ipvsadmRestore()).isEqualTo(reference.ipvsadmRestore());
            assertThat(again.ipsetRestore()).isEqualTo(reference.ipsetRestore());
            assertThat(again.iptablesRestore()).isEqualTo(reference.iptablesRestore());
        }
    }

    @Test
    void everyNodeGetsItsOwnLocalEndpointsAndNodePorts() throws Exception {
        GoldenCase c = GoldenCase.load(SHOP);
        IpvsRules b = IpvsCompiler.compile(c.state(), "node-b", c.settings(), "rr");
        // node-b holds checkout's only endpoint: its eTP=Local NodePort uses it as a local endpoint.
        assertThat(b.ipvsadmRestore())
                .contains("-A -t 192.168.50.11:30443 -s rr\n-a -t 192.168.50.11:30443 -r 10.244.1.31:8443 -m -w 1\n")
                .doesNotContain("192.168.50.1:");
        assertThat(b.sets().get(IpvsSet.LOOP_BACK))
                .containsExactly(
                        "10.244.1.12,tcp:8080,10.244.1.12",
                        "10.244.1.13,tcp:8080,10.244.1.13",
                        "10.244.1.21,tcp:8080,10.244.1.21",
                        "10.244.1.31,tcp:8443,10.244.1.31");
    }

    @Test
    void theSizesAreCounted() throws Exception {
        GoldenCase c = GoldenCase.load(SHOP);
        IpvsRules r = IpvsCompiler.compile(c.state(), c.node(), c.settings(), "rr");
        assertThat(r.virtualServers()).hasSize(7);
        assertThat(r.realServerCount()).isEqualTo(9);
        assertThat(r.setMemberCount()).isEqualTo(19);
        assertThat(r.iptablesRuleCount())
                .isEqualTo(r.natRules().size() + r.filterRules().size() + 9);
    }

    @Test
    void badSchedulersAndUnknownNodesAreRefusedByName() throws Exception {
        GoldenCase c = GoldenCase.load(SHOP);
        assertThatThrownBy(() -> IpvsCompiler.compile(c.state(), c.node(), c.settings(), "fastest"))
                .hasMessageStartingWith("scheduler: 'fastest' is not an IPVS scheduler");
        assertThatThrownBy(() -> IpvsCompiler.compile(c.state(), "node-z", ProxySettings.defaults(IpFamily.IPV4), "rr"))
                .hasMessageContaining("node-z");
    }

    @Test
    void ipv6SetNamesAreCutToIpsetsLimit() {
        assertThat(IpvsSet.LOAD_BALANCER_SOURCE_CIDR.name(IpFamily.IPV6))
                .isEqualTo("KUBE-6-LOAD-BALANCER-SOURCE-CID")
                .hasSize(31);
        assertThat(IpvsSet.NODE_PORT_LOCAL_SCTP.name(IpFamily.IPV6)).isEqualTo("KUBE-6-NODE-PORT-LOCAL-SCTP-HAS");
        assertThat(IpvsSet.CLUSTER_IP.name(IpFamily.IPV6)).isEqualTo("KUBE-6-CLUSTER-IP");
        assertThat(IpvsSet.CLUSTER_IP.name(IpFamily.IPV4)).isEqualTo("KUBE-CLUSTER-IP");
    }
}
