package io.rulesync.compiler.kernel;

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
import org.junit.jupiter.api.Test;

/**
 * nftables mode: the node's {@code ip} and {@code ip6} {@code kube-proxy} tables loaded with {@code nft -f} into a lab
 * node that already holds someone else's table, carrying the {@link ServiceKernelContract}'s connections. Where
 * nftables mode differs from iptables mode on purpose (no localhost NodePorts; a ClusterIP's undeclared ports refused),
 * this test says so.
 */
@RequiresNetns
@RequiresTool("nft")
class NftablesKernelTest extends ServiceKernelContract {

    @Override
    void load(NetnsLab lab, ClusterState state) throws Exception {
        // Someone else's table, which loading kube-proxy's must leave alone.
        lab.execWithInput(
                        lab.nodeNs(),
                        "add table inet other\nadd chain inet other input { type filter hook input priority 10 ; }\n",
                        "nft",
                        "-f",
                        "-")
                .orThrow();
        ProxySettings v4 = ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16")));
        ProxySettings v6 = v4.withFamily(IpFamily.IPV6)
                .withClusterCidrs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse(lab.podCidrIPv6())));
        String tables = NftablesCompiler.renderAll(
                List.of(NftablesCompiler.compile(state, "node-a", v4), NftablesCompiler.compile(state, "node-a", v6)));
        lab.execWithInput(lab.nodeNs(), tables, "nft", "-f", "-").orThrow();
    }

    @Test
    void theKernelHoldsKubeProxysTablesBesideTheOthers() {
        String v4 = lab.exec(lab.nodeNs(), "nft", "list", "table", "ip", "kube-proxy")
                .orThrow()
                .stdout();
        assertThat(v4)
                .contains(
                        "chain filter-prerouting-pre-dnat",
                        "chain nat-prerouting",
                        "map service-ips",
                        "set cluster-ips",
                        "numgen random mod 3 vmap");
        assertThat(lab.exec(lab.nodeNs(), "nft", "list", "table", "ip6", "kube-proxy")
                        .orThrow()
                        .stdout())
                .contains("fd00:96::70");
        assertThat(lab.exec(lab.nodeNs(), "nft", "list", "tables").orThrow().stdout())
                .contains("table inet other");
    }

    @Test
    void aClusterIpsUndeclaredPortsAreRefusedNotRouted() {
        // nftables mode's strict service IPs: cluster-ips-check rejects what no service port takes.
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.10", 81, 3, TIMEOUT_MS))
                .containsOnly("REFUSED");
    }

    @Test
    void noLocalhostNodePorts() {
        // iptables mode serves them (with route_localnet); nftables mode never does.
        assertThat(lab.probe(lab.nodeNs(), "tcp", "127.0.0.1", 30080, 3, TIMEOUT_MS))
                .containsOnly("REFUSED");
    }
}
