package io.rulesync.compiler.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A partial transaction applied by the kernel leaves exactly the table a full one writes: one namespace is loaded
 * with the old table and then the delta (and its cleanup), another with the new table at once, and the two listings
 * are the same.
 */
@RequiresNetns
@RequiresTool("nft")
class NftDeltaKernelTest {
    private static final ProxySettings SETTINGS =
            ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.0.0.0/8")));

    @Test
    void aDeltaOnTheOldTableGivesTheNewTable() throws Exception {
        ClusterState before = SyntheticCluster.build(50, 3);
        ClusterState after = before.withEndpointSlice(SyntheticCluster.slice(5, 3, 1)) // an endpoint moves
                .withService(SyntheticCluster.service(60))
                .withEndpointSlice(SyntheticCluster.slice(60, 3, 0)) // a Service comes
                .withoutService(SyntheticCluster.serviceName(6)) // an affinity Service goes
                .withoutEndpointSlice(SyntheticCluster.slice(6, 3, 0).name());
        NftTransaction old = NftablesCompiler.compile(before, SyntheticCluster.NODE, SETTINGS);
        NftTransaction now = NftablesCompiler.compile(after, SyntheticCluster.NODE, SETTINGS);
        NftDelta delta = NftDelta.between(old, now);
        assertThat(delta.main().render()).contains("delete set ip kube-proxy affinity-");
        assertThat(delta.cleanup().ops()).isNotEmpty();

        try (NetnsLab lab = new NetnsLab(1)) {
            String patched = lab.nodeNs();
            String fresh = lab.clientNs();
            load(lab, patched, old.render());
            load(lab, patched, delta.main().render());
            load(lab, patched, delta.cleanup().render());
            load(lab, fresh, now.render());
            assertThat(listing(lab, patched)).isEqualTo(listing(lab, fresh));
        }
    }

    private static void load(NetnsLab lab, String ns, String transaction) {
        lab.execWithInput(ns, transaction, "nft", "-f", "-").orThrow();
    }

    /** The table's lines, sorted: chains and elements are listed in the order they were made, which differs. */
    private static List<String> listing(NetnsLab lab, String ns) {
        return lab.exec(ns, "nft", "-s", "list", "table", "ip", "kube-proxy")
                .orThrow()
                .stdout()
                .lines()
                .map(String::strip)
                .flatMap(l -> java.util.Arrays.stream(l.split(", ")))
                .sorted()
                .toList();
    }
}
