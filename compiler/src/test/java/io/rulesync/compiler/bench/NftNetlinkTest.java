package io.rulesync.compiler.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.exec.NftNetlink;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bench's netlink writer says what {@code nft} would: what it adds and deletes in a real kube-proxy table is
 * what {@code nft list} then shows, and a refusal comes back with the kernel's errno.
 */
@RequiresNetns
@RequiresTool("nft")
class NftNetlinkTest {
    private static final String TABLE = "kube-proxy";
    private static final byte[] VIP = {(byte) 172, 31, (byte) 255, 1};
    private static final NftNetlink.Family IP = NftNetlink.Family.IP;
    private static final byte[] KEY =
            new NftNetlink.Key().address(VIP).protocol(6).port(8080).bytes();

    @Test
    void changesATableAsNftWould() throws Exception {
        try (NetnsLab lab = new NetnsLab(1)) {
            String ns = lab.nodeNs();
            String table = NftablesCompiler.compile(
                            SyntheticCluster.build(20, 3), SyntheticCluster.NODE, ProxySettings.defaults(IpFamily.IPV4))
                    .render();
            lab.execWithInput(ns, table, "nft", "-f", "-").orThrow();
            try (NftNetlink netlink = new NftNetlink(ns)) {
                netlink.run(List.of(
                        NftNetlink.addElement(IP, TABLE, "cluster-ips", VIP, null),
                        NftNetlink.addElement(IP, TABLE, "no-endpoint-services", KEY, NftNetlink.Verdict.DROP),
                        NftNetlink.addChain(IP, TABLE, "bench-chain"),
                        NftNetlink.addCounterRule(IP, TABLE, "bench-chain"),
                        NftNetlink.addElement(
                                IP,
                                TABLE,
                                "service-nodeports",
                                new NftNetlink.Key().protocol(17).port(30053).bytes(),
                                NftNetlink.Verdict.goTo("bench-chain")),
                        NftNetlink.addElement(
                                IP,
                                TABLE,
                                "no-endpoint-nodeports",
                                new NftNetlink.Key().protocol(6).port(30080).bytes(),
                                "ns1/svc1:p80",
                                NftNetlink.Verdict.DROP)));
                assertThat(list(lab, ns, "set", "cluster-ips")).contains("172.31.255.1");
                assertThat(list(lab, ns, "map", "no-endpoint-services")).contains("172.31.255.1 . tcp . 8080 : drop");
                assertThat(list(lab, ns, "chain", "bench-chain")).contains("counter packets 0 bytes 0");
                assertThat(list(lab, ns, "map", "service-nodeports")).contains("udp . 30053 : goto bench-chain");
                assertThat(list(lab, ns, "map", "no-endpoint-nodeports"))
                        .contains("tcp . 30080 comment \"ns1/svc1:p80\" : drop");

                netlink.run(List.of(
                        NftNetlink.deleteElement(IP, TABLE, "cluster-ips", VIP),
                        NftNetlink.deleteElement(IP, TABLE, "no-endpoint-services", KEY),
                        NftNetlink.deleteElement(
                                IP,
                                TABLE,
                                "service-nodeports",
                                new NftNetlink.Key().protocol(17).port(30053).bytes()),
                        NftNetlink.flushChain(IP, TABLE, "bench-chain"),
                        NftNetlink.addChain(IP, TABLE, "other-chain")));
                assertThat(list(lab, ns, "set", "cluster-ips")).doesNotContain("172.31.255.1");
                assertThat(list(lab, ns, "map", "no-endpoint-services")).doesNotContain("8080");
                assertThat(list(lab, ns, "chain", "bench-chain")).doesNotContain("counter");
                netlink.run(List.of(NftNetlink.deleteChain(IP, TABLE, "bench-chain")));
                assertThat(lab.exec(ns, "nft", "list", "chains").orThrow().stdout())
                        .doesNotContain("bench-chain");

                // A transaction is all or nothing: the rule's missing chain refuses it, and the chain before it is not
                // added.
                assertThatThrownBy(() -> netlink.run(List.of(
                                NftNetlink.addChain(IP, TABLE, "never-added"),
                                NftNetlink.addCounterRule(IP, TABLE, "no-such-chain"))))
                        .hasMessageContaining("message 2 of 2: errno 2");
                assertThat(lab.exec(ns, "nft", "list", "chains").orThrow().stdout())
                        .doesNotContain("never-added")
                        .contains("other-chain");
            }
        }
    }

    private static String list(NetnsLab lab, String ns, String kind, String name) throws Exception {
        return lab.exec(ns, "nft", "list", kind, "ip", TABLE, name).orThrow().stdout();
    }
}
