package io.rulesync.model.cluster;

import java.util.Optional;

/**
 * The address ranges the API server refuses as an endpoint or an external IP
 * ({@code ValidateNonSpecialIP}): traffic sent there would reach the node itself (its loopback, the
 * cloud metadata service at 169.254.169.254) rather than a Service's backend. The tests are Go's
 * {@code net.IP} methods, which the API server uses, so an IPv4-mapped IPv6 address is judged by
 * its IPv4 address, and IPv6 link-local multicast is any multicast of link scope ({@code ffX2::}).
 */
public enum SpecialRange {
    UNSPECIFIED("unspecified"),
    LOOPBACK("loopback"),
    LINK_LOCAL("link-local"),
    LINK_LOCAL_MULTICAST("link-local multicast");

    private final String label;

    SpecialRange(String label) {
        this.label = label;
    }

    /** As a message says it: {@code 169.254.169.254 is link-local}. */
    public String label() {
        return label;
    }

    /**
     * What is wrong with {@code ip} where the API server wants an ordinary address (an endpoint, an
     * external IP): {@code "is link-local"}, {@code "is an IPv4-mapped IPv6 address"}; empty if nothing.
     */
    public static Optional<String> refusal(IpAddress ip) {
        if (ip.isIpv4Mapped()) {
            return Optional.of("is an IPv4-mapped IPv6 address");
        }
        return of(ip).map(r -> "is " + r.label);
    }

    /** The range {@code ip} lies in, if any. */
    public static Optional<SpecialRange> of(IpAddress ip) {
        if (ip.length() == 4 || ip.isIpv4Mapped()) {
            int o = ip.length() - 4; // Go's To4: the last four bytes of a mapped address
            int a = ip.byteAt(o);
            int b = ip.byteAt(o + 1);
            int c = ip.byteAt(o + 2);
            int d = ip.byteAt(o + 3);
            if ((a | b | c | d) == 0) {
                return Optional.of(UNSPECIFIED);
            }
            if (a == 127) {
                return Optional.of(LOOPBACK);
            }
            if (a == 169 && b == 254) {
                return Optional.of(LINK_LOCAL);
            }
            return a == 224 && b == 0 && c == 0 ? Optional.of(LINK_LOCAL_MULTICAST) : Optional.empty();
        }
        boolean zeroTo15 = true;
        for (int i = 0; i < 15; i++) {
            zeroTo15 &= ip.byteAt(i) == 0;
        }
        if (zeroTo15 && ip.byteAt(15) == 0) {
            return Optional.of(UNSPECIFIED);
        }
        if (zeroTo15 && ip.byteAt(15) == 1) {
            return Optional.of(LOOPBACK);
        }
        if (ip.byteAt(0) == 0xfe && (ip.byteAt(1) & 0xc0) == 0x80) {
            return Optional.of(LINK_LOCAL);
        }
        return ip.byteAt(0) == 0xff && (ip.byteAt(1) & 0x0f) == 0x02
                ? Optional.of(LINK_LOCAL_MULTICAST)
                : Optional.empty();
    }
}
