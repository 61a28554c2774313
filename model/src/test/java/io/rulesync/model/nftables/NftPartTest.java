package io.rulesync.model.nftables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.Unit;
import java.util.List;
import org.junit.jupiter.api.Test;

class NftPartTest {
    private static final NftPart.Endpoint A = new NftPart.Endpoint(IpAddress.parse("10.180.0.1"), 8080);
    private static final NftPart.Endpoint B = new NftPart.Endpoint(IpAddress.parse("10.180.0.2"), 8080);
    private static final NftPart.Port WEB = new NftPart.Port(
            (Unit.Port) Unit.parse("shop/web:http/TCP"),
            IpAddress.parse("10.96.0.10"),
            80,
            30080,
            List.of(IpAddress.parse("192.0.2.10")),
            List.of(IpAddress.parse("192.0.2.20")),
            List.of(Cidr.parse("203.0.113.0/24")),
            true,
            false,
            true,
            10800,
            false,
            Cidr.parse("10.180.0.0/16"),
            true,
            List.of(A, B),
            List.of(A),
            List.of(A, B));
    private static final NftPart.Fixed FIXED = new NftPart.Fixed(
            0x4000, false, List.of(new NftPart.NodePorts("node-a", List.of(IpAddress.parse("192.168.0.2")))));

    @Test
    void partsReadBackFromTheirText() {
        for (NftPart p : List.of(WEB, FIXED)) {
            RuleFragment f = RuleFragment.EMPTY.withNftables(p);
            assertThat(f.text()).startsWith("*nftables\n");
            assertThat(RuleFragment.parse(f.text())).isEqualTo(f);
        }
        assertThat(RuleFragment.EMPTY.text()).isEmpty();
    }

    @Test
    void refusesWhatItDidNotWrite() {
        String good = String.join("\n", WEB.lines());
        // Anything else is named by line, and never reaches nft.
        assertThatThrownBy(() -> read(good.replace("10.96.0.10", "10.96.0.10;flush")))
                .hasMessageContaining("line 2: nftables part");
        assertThatThrownBy(() -> read(good.replace("10.96.0.10", "fd00::10")))
                .hasMessageContaining("not of the ClusterIP's family");
        assertThatThrownBy(() -> read(good.replace("cluster 10.180.0.1:8080", "cluster 10.180.0.9:8080")))
                .hasMessageContaining("the chains' endpoints are not the reachable ones");
        assertThatThrownBy(() -> read(good.replace(" 80 30080", " 080 30080")))
                .hasMessageContaining("not in canonical form");
        assertThatThrownBy(() -> read(good.replace("10800", "100000"))).hasMessageContaining("affinity");
        assertThatThrownBy(() -> read("fixed 0x4001 listed")).hasMessageContaining("is not one bit");
        assertThatThrownBy(() -> read("fixed 0x4000 listed\nnodeports node-a 127.0.0.1"))
                .hasMessageContaining("loopback");
        assertThatThrownBy(() -> read("")).hasMessageContaining("an empty nftables section");
    }

    @Test
    void assemblesANodesTableFromItsParts() {
        String table =
                NftAssembly.table("node-a", IpFamily.IPV4, FIXED, List.of(WEB)).render();
        assertThat(table)
                .contains("add element ip kube-proxy nodeport-ips { 192.168.0.2 }")
                .contains("add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto service-")
                .contains("add element ip kube-proxy firewall-ips { 192.0.2.20 . tcp . 80 : goto firewall-")
                .contains("ip saddr != { 203.0.113.0/24 , 192.0.2.20 } drop")
                .contains("add set ip kube-proxy affinity-")
                .contains("meta l4proto tcp dnat to 10.180.0.2:8080");
        // Another node of the same class gets the same rules and its own NodePort addresses (here none).
        assertThat(NftAssembly.table("node-b", IpFamily.IPV4, FIXED, List.of(WEB))
                        .render())
                .doesNotContain("{ 192.168.0.2 }");
        assertThatThrownBy(() -> NftAssembly.table("node-a", IpFamily.IPV6, FIXED, List.of(WEB)))
                .hasMessageContaining("IPV6");
    }

    private static void read(String part) {
        RuleFragment.parse("*nftables\n" + part + "\n");
    }
}
