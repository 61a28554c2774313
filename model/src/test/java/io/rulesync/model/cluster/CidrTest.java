package io.rulesync.model.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {
    @Test
    void masksTheNetworkAndTrimsWhitespaceLikeKubeProxy() {
        assertThat(Cidr.parse(" 203.0.113.7/25 ").toString()).isEqualTo("203.0.113.0/25");
        assertThat(Cidr.parse("fd00:10::5/64").toString()).isEqualTo("fd00:10::/64");
        assertThat(Cidr.parse("0.0.0.0/0").prefix()).isZero();
    }

    @Test
    void containsAddressesOfItsFamilyOnly() {
        Cidr c = Cidr.parse("10.0.0.0/8");
        assertThat(c.contains(IpAddress.parse("10.255.1.2"))).isTrue();
        assertThat(c.contains(IpAddress.parse("11.0.0.1"))).isFalse();
        assertThat(c.contains(IpAddress.parse("::a00:1"))).isFalse();
        assertThat(Cidr.parse("192.168.0.0/23").contains(IpAddress.parse("192.168.1.200")))
                .isTrue();
        assertThat(Cidr.parse("192.168.0.0/23").contains(IpAddress.parse("192.168.2.1")))
                .isFalse();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "10.0.0.0",
                "10.0.0.0/33",
                "fd00::/129",
                "10.0.0.0/-1",
                "10.0.0.0/08",
                "10.0.0.0/8 -j ACCEPT",
                "/8"
            })
    void refusesInvalidCidrs(String s) {
        assertThatThrownBy(() -> Cidr.parse(s)).isInstanceOf(IllegalArgumentException.class);
    }
}
