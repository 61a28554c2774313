package io.rulesync.compiler.kernel;

import static io.rulesync.compiler.kernel.KernelTestCluster.answers;
import static io.rulesync.compiler.kernel.KernelTestCluster.peer;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The nftables mode's tables, loaded with {@code nft -f} into a lab node's namespace (the same cluster as
 * {@link CompiledRulesKernelTest}), carrying real TCP and UDP connections. Where nftables mode differs from iptables mode
 * on purpose (no localhost NodePorts; a ClusterIP's other ports refused), the test says so.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresNetns
@RequiresTool("nft")
class NftablesKernelTest {
    private static final int TIMEOUT_MS = 3000;
    private static final int DROP_WAIT_MS = 700;

    private NetnsLab lab;

    @BeforeAll
    void buildNodeAndLoadTables() throws Exception {
        lab = new NetnsLab(6);
        for (int pod = 0; pod < 6; pod++) {
            lab.serve(pod, "tcp", 8080, "pod" + pod);
        }
        lab.serve(0, "udp", 5353, "pod0");
        lab.serve(1, "udp", 5353, "pod1");
        // Someone else's table, which loading kube-proxy's must leave alone.
        lab.execWithInput(lab.nodeNs(), "add table inet other\nadd chain inet other input { type filter hook input priority 10 ; }\n",
                "nft", "-f", "-").orThrow();

        ClusterState state = KernelTestCluster.state(lab);
        ProxySettings v4 = ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16")));
        ProxySettings v6 = v4.withFamily(IpFamily.IPV6)
                .withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse(lab.podCidrIPv6())));
        String tables = NftablesCompiler.renderAll(List.of(NftablesCompiler.compile(state, "node-a", v4),
                NftablesCompiler.compile(state, "node-a", v6)));
        lab.execWithInput(lab.nodeNs(), tables, "nft", "-f", "-").orThrow();
    }

    @AfterAll
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void theKernelHoldsKubeProxysTablesBesideTheOthers() {
        String v4 = lab.exec(lab.nodeNs(), "nft", "list", "table", "ip", "kube-proxy").orThrow().stdout();
        assertThat(v4).contains("chain filter-prerouting-pre-dnat", "chain nat-prerouting", "map service-ips", "set cluster-ips",
                "numgen random mod 3 vmap");
        assertThat(lab.exec(lab.nodeNs(), "nft", "list", "table", "ip6", "kube-proxy").orThrow().stdout()).contains("fd00:96::70");
        assertThat(lab.exec(lab.nodeNs(), "nft", "list", "tables").orThrow().stdout()).contains("table inet other");
    }

    @Test
    void clusterIPIsBalancedAcrossExactlyTheReadyEndpoints() {
        var seen = answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.10", 80, 300, TIMEOUT_MS));
        assertThat(seen.keySet()).containsExactlyInAnyOrder("pod0", "pod1", "pod2");
        assertThat(seen.values()).allSatisfy(n -> assertThat(n).isBetween(60L, 140L));
        assertThat(answers(lab.probe(lab.nodeNs(), "tcp", "10.96.0.10", 80, 60, TIMEOUT_MS)).keySet())
                .isSubsetOf("pod0", "pod1", "pod2").hasSizeGreaterThan(1);
        assertThat(answers(lab.probe(lab.podNs(4), "udp", "10.96.0.53", 53, 60, TIMEOUT_MS)).keySet())
                .containsExactlyInAnyOrder("pod0", "pod1");
    }

    @Test
    void aClusterIpsOtherPortsAreRefusedNotRouted() {
        // nftables mode's strict service IPs: cluster-ips-check rejects what no service port takes.
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.10", 81, 3, TIMEOUT_MS)).containsOnly("REFUSED");
    }

    @Test
    void clientIPSessionAffinityHolds() {
        var fromPod4 = answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.20", 80, 40, TIMEOUT_MS));
        assertThat(fromPod4).hasSize(1);
        assertThat(answers(lab.probe(lab.podNs(5), "tcp", "10.96.0.20", 80, 40, TIMEOUT_MS))).hasSize(1);
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.20", 80, 10, TIMEOUT_MS)).keySet()).isEqualTo(fromPod4.keySet());
    }

    @Test
    void nodePortWorksOnTheNodesAddressNotOnLocalhost() {
        List<String> outside = lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30080, 60, TIMEOUT_MS);
        assertThat(answers(outside).keySet()).isSubsetOf("pod0", "pod1", "pod2").hasSizeGreaterThan(1);
        assertThat(outside).allSatisfy(l -> assertThat(peer(l)).isNotEqualTo(lab.clientIPv4()));
        assertThat(answers(lab.probe(lab.nodeNs(), "tcp", lab.nodeIPv4(), 30080, 20, TIMEOUT_MS)).keySet())
                .isSubsetOf("pod0", "pod1", "pod2");
        // nftables mode serves no localhost NodePorts (iptables mode does, with route_localnet).
        assertThat(lab.probe(lab.nodeNs(), "tcp", "127.0.0.1", 30080, 3, TIMEOUT_MS)).containsOnly("REFUSED");
    }

    @Test
    void externalTrafficPolicyLocalKeepsOutsideTrafficOnLocalEndpointsAndTheClientIP() {
        List<String> outside = lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30081, 60, TIMEOUT_MS);
        assertThat(answers(outside).keySet()).containsExactly("pod0");
        assertThat(outside).allSatisfy(l -> assertThat(peer(l)).isEqualTo(lab.clientIPv4()));
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.12", 80, 60, TIMEOUT_MS)).keySet())
                .containsExactlyInAnyOrder("pod0", "pod2");
    }

    @Test
    void servicesWithoutEndpointsRefuseAndLocalPolicyWithoutLocalEndpointsDrops() {
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.30", 80, 3, TIMEOUT_MS)).containsOnly("REFUSED");
        assertThat(lab.probe(lab.nodeNs(), "tcp", "10.96.0.30", 80, 3, TIMEOUT_MS)).containsOnly("REFUSED");
        assertThat(lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30082, 3, TIMEOUT_MS)).containsOnly("REFUSED");
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.50", 80, 1, DROP_WAIT_MS)).containsOnly("TIMEOUT");
    }

    @Test
    void hairpinTrafficReachesThePodThatSentItMasqueraded() {
        List<String> lines = lab.probe(lab.podNs(0), "tcp", "10.96.0.40", 80, 5, TIMEOUT_MS);
        assertThat(answers(lines).keySet()).containsExactly("pod0");
        assertThat(lines).allSatisfy(l -> assertThat(peer(l)).isNotEqualTo(lab.podIPv4(0)));
    }

    @Test
    void loadBalancerSourceRangesAdmitAndDrop() {
        assertThat(answers(lab.probe(lab.clientNs(), "tcp", "198.51.100.10", 80, 5, TIMEOUT_MS)).keySet()).containsExactly("pod1");
        assertThat(lab.probe(lab.clientNs(), "tcp", "198.51.100.11", 80, 1, DROP_WAIT_MS)).containsOnly("TIMEOUT");
    }

    @Test
    void ipv6TableCarriesClusterIPAndNodePortTraffic() {
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "fd00:96::70", 80, 60, TIMEOUT_MS)).keySet())
                .containsExactlyInAnyOrder("pod0", "pod1");
        assertThat(answers(lab.probe(lab.clientNs(), "tcp", lab.nodeIPv6(), 30083, 20, TIMEOUT_MS)).keySet())
                .isSubsetOf("pod0", "pod1");
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.70", 80, 1, TIMEOUT_MS)).containsOnly("REFUSED");
    }
}
