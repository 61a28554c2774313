package io.rulesync.agent.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NetlinkBatchTest {
    private static final Map<String, String> TYPES = Map.of(
            "cluster-ips", "ipv4_addr",
            "service-ips", "ipv4_addr . inet_proto . inet_service",
            "service-nodeports", "inet_proto . inet_service");

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    @Test
    void keysAreEncodedFieldByFieldInRegistersOfFourBytes() {
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "ipv4_addr", "10.96.0.1").map(NetlinkBatchTest::hex))
                .contains("0a600001");
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "ipv4_addr . inet_proto . inet_service", "10.96.0.1 . udp . 53")
                        .map(NetlinkBatchTest::hex))
                .contains("0a600001" + "11000000" + "00350000");
        assertThat(NetlinkBatch.key(IpFamily.IPV6, "ipv6_addr . inet_proto . inet_service", "fd00::1 . sctp . 65535")
                        .map(NetlinkBatchTest::hex))
                .contains("fd000000000000000000000000000001" + "84000000" + "ffff0000");
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "inet_proto . inet_service", "tcp . 30080")
                        .map(NetlinkBatchTest::hex))
                .contains("06000000" + "75800000");
    }

    @Test
    void aKeyOfAnyOtherShapeIsLeftToNft() {
        assertThat(NetlinkBatch.key(IpFamily.IPV4, null, "10.0.0.1")).isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "ipv4_addr", "fd00::1")).isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV6, "ipv4_addr", "10.0.0.1")).isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "ipv4_addr", "010.0.0.1")).isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "inet_proto . inet_service", "icmp . 1"))
                .isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "inet_proto . inet_service", "tcp . 65536"))
                .isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "inet_proto . inet_service", "tcp"))
                .isEmpty();
        assertThat(NetlinkBatch.key(IpFamily.IPV4, "mark", "1")).isEmpty();
    }

    @Test
    void chainsAndElementsGoAsNetlinkAndAnythingWithARuleGoesToNft() {
        NftTransaction elements = new NftTransaction(
                IpFamily.IPV4,
                List.of(
                        new NftOp.AddChain("service-X"),
                        new NftOp.FlushChain("service-X"),
                        new NftOp.DeleteChain("endpoint-Y"),
                        new NftOp.DeleteSet("affinity-Y"),
                        new NftOp.AddElement("cluster-ips", "10.96.0.1", null, null),
                        new NftOp.AddElement("service-ips", "10.96.0.1 . tcp . 80", null, "goto service-X"),
                        new NftOp.AddElement("service-nodeports", "tcp . 30080", "ns/s:p", "drop"),
                        new NftOp.DeleteElement("service-ips", "10.96.0.2 . tcp . 80")));
        assertThat(NetlinkBatch.of(IpFamily.IPV4, elements, TYPES))
                .hasValueSatisfying(m -> assertThat(m).hasSize(8));

        for (NftOp other : List.of(
                new NftOp.AddRule("service-X", "jump mark-for-masquerade"),
                new NftOp.AddChain("filter-input", new NftOp.BaseChain("filter", "input", 0), null),
                new NftOp.AddChain("service-X", null, "a comment"),
                new NftOp.AddElement("service-ips", "10.96.0.1 . tcp . 80", null, "continue"),
                new NftOp.AddElement("unknown", "10.96.0.1", null, null))) {
            NftTransaction mixed =
                    new NftTransaction(IpFamily.IPV4, List.of(new NftOp.DeleteChain("endpoint-Y"), other));
            assertThat(NetlinkBatch.of(IpFamily.IPV4, mixed, TYPES))
                    .as(other.toString())
                    .isEmpty();
        }
    }
}
