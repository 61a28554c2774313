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

    /** The range {@code ip} lies in, if any. */
    public static Optional<SpecialRange> of(IpAddress ip) {
        int[] b = ip.isIpv4Mapped() ? tail4(ip) : null;
        if (ip.length() == 4 || b != null) {
            if (b == null) {
                b = new int[] {ip.byteAt(0), ip.byteAt(1), ip.byteAt(2), ip.byteAt(3)};
            }
            if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) {
                return Optional.of(UNSPECIFIED);
            }
            if (b[0] == 127) {
                return Optional.of(LOOPBACK);
            }
            if (b[0] == 169 && b[1] == 254) {
                return Optional.of(LINK_LOCAL);
            }
            if (b[0] == 224 && b[1] == 0 && b[2] == 0) {
                return Optional.of(LINK_LOCAL_MULTICAST);
            }
            return Optional.empty();
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
        if (ip.byteAt(0) == 0xff && (ip.byteAt(1) & 0x0f) == 0x02) {
            return Optional.of(LINK_LOCAL_MULTICAST);
        }
        return Optional.empty();
    }

    private static int[] tail4(IpAddress ip) {
        return new int[] {ip.byteAt(12), ip.byteAt(13), ip.byteAt(14), ip.byteAt(15)};
    }
}
