package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The addresses on kube-ipvs0: read from ip, and what one family's sync adds and removes. */
class BoundAddressesTest {

    /** {@code ip -o addr show dev kube-ipvs0} as iproute2 6.1 printed it in a namespace (the device was up there). */
    static final String SHOWN = """
            3: kube-ipvs0    inet 10.96.0.10/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
            3: kube-ipvs0    inet 10.96.0.11/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
            3: kube-ipvs0    inet 10.0.0.0/24 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever
            3: kube-ipvs0    inet6 fd00:10:96::20/128 scope global nodad \\       valid_lft forever preferred_lft forever
            3: kube-ipvs0    inet6 fe80::a8c1:abff:fe12:3456/64 scope link \\       valid_lft forever preferred_lft forever
            """;

    @Test
    void readsAddressesWithPrefixesAndLeavesLinkLocalOut() {
        assertThat(BoundAddresses.parse(SHOWN))
                .containsExactly(
                        Map.entry(ip("10.0.0.0"), 24),
                        Map.entry(ip("10.96.0.10"), 32),
                        Map.entry(ip("10.96.0.11"), 32),
                        Map.entry(ip("fd00:10:96::20"), 128));
        assertThat(BoundAddresses.parse("")).isEmpty();
    }

    @Test
    void onlyTheFamilysAddressesChange() {
        BoundAddresses.Diff d = BoundAddresses.Diff.between(
                IpFamily.IPV4,
                List.of(ip("10.96.0.10"), ip("10.96.0.12")),
                BoundAddresses.parse(SHOWN).keySet());
        assertThat(d.add()).containsExactly(ip("10.96.0.12"));
        assertThat(d.remove()).containsExactly(ip("10.0.0.0"), ip("10.96.0.11"));
        BoundAddresses.Diff v6 = BoundAddresses.Diff.between(
                IpFamily.IPV6,
                List.of(ip("fd00:10:96::20")),
                BoundAddresses.parse(SHOWN).keySet());
        assertThat(v6.isEmpty()).isTrue();
        BoundAddresses.Diff none = BoundAddresses.Diff.between(
                IpFamily.IPV6, List.of(), BoundAddresses.parse(SHOWN).keySet());
        assertThat(none.remove()).containsExactly(ip("fd00:10:96::20"));
        assertThat(none.add()).isEmpty();
    }

    @Test
    void aDesiredAddressOfTheOtherFamilyIsAMistake() {
        assertThatThrownBy(() -> BoundAddresses.Diff.between(IpFamily.IPV4, List.of(ip("fd00::1")), List.of()))
                .hasMessageContaining("fd00::1 is not IPV4");
    }
}
