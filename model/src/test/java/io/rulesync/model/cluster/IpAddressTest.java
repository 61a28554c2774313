package io.rulesync.model.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    @ParameterizedTest
    @CsvSource({
        "10.0.0.1, 10.0.0.1",
        "0.0.0.0, 0.0.0.0",
        "255.255.255.255, 255.255.255.255",
        "fd00:10::1, fd00:10::1",
        "FD00:0010:0000:0000:0000:0000:0000:0001, fd00:10::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
        "::, ::",
        "::1, ::1",
        "1::, 1::",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "::ffff:10.0.0.1, ::ffff:10.0.0.1",
        "64:ff9b::192.0.2.33, 64:ff9b::c000:221",
    })
    void printsTheCanonicalFormGoPrints(String input, String canonical) {
        assertThat(IpAddress.parse(input).toString()).isEqualTo(canonical);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "10.0.0",
                "10.0.0.1.2",
                "10.0.0.256",
                "010.0.0.1",
                "10.0.0.1 ",
                " 10.0.0.1",
                "10.0.0.1\n-A",
                "1:2:3:4:5:6:7:8:9",
                "1::2::3",
                ":1::",
                "1:",
                "g::1",
                "12345::",
                "example.com",
                "10.0.0.1/8",
                "::ffff:10.0.0.256",
                "1.2.3.4:80"
            })
    void refusesAnythingButAnAddressLiteral(String input) {
        assertThatThrownBy(() -> IpAddress.parse(input)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void knowsLoopbackAndFamily() {
        assertThat(IpAddress.parse("127.3.0.1").isLoopback()).isTrue();
        assertThat(IpAddress.parse("::1").isLoopback()).isTrue();
        assertThat(IpAddress.parse("10.0.0.1").isLoopback()).isFalse();
        assertThat(IpAddress.parse("::1").family()).isEqualTo(IpFamily.IPV6);
    }

    static long[] seeds() {
        return new Random(20261129L).longs(500).toArray();
    }

    /** Any 16 bytes survive printing and parsing, and the JDK's parser reads the same address back. */
    @ParameterizedTest
    @MethodSource("seeds")
    void ipv6RoundTrips(long seed) throws Exception {
        Random r = new Random(seed);
        byte[] bytes = new byte[16];
        r.nextBytes(bytes);
        // Zero runs are what the "::" compression is about; make them frequent.
        for (int i = 0; i < 16; i++) {
            if (r.nextInt(3) == 0) {
                bytes[i] = 0;
            }
        }
        IpAddress ip = IpAddress.ofBytes(bytes);
        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
        byte[] jdk = InetAddress.getByName(ip.toString()).getAddress();
        if (jdk.length == 16) { // the JDK turns ::ffff:a.b.c.d into an IPv4 address
            assertThat(jdk).containsExactly(bytes);
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void ipv4RoundTrips(long seed) {
        byte[] bytes = new byte[4];
        new Random(seed).nextBytes(bytes);
        IpAddress ip = IpAddress.ofBytes(bytes);
        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
        assertThat(ip.toString()).matches("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}");
    }
}
