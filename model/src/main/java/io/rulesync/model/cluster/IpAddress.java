package io.rulesync.model.cluster;

import java.util.Arrays;
import java.util.Optional;

/**
 * A validated IPv4 or IPv6 address in canonical text form (dotted quad; RFC 5952 for IPv6, which is
 * what Go's {@code net.IP.String()} prints and therefore what kube-proxy writes into rules).
 *
 * <p>Parsing never touches DNS and accepts nothing but an address literal, so the text of an
 * {@code IpAddress} is always safe to place into iptables-restore input.
 */
public final class IpAddress implements Comparable<IpAddress> {
    private final byte[] bytes;
    private final String text;

    private IpAddress(byte[] bytes) {
        this.bytes = bytes;
        this.text = bytes.length == 4 ? formatV4(bytes) : formatV6(bytes);
    }

    /** Parses an address literal; throws {@link IllegalArgumentException} naming what is wrong. */
    public static IpAddress parse(String s) {
        if (s == null || s.isEmpty()) {
            throw new IllegalArgumentException("empty IP address");
        }
        byte[] b = s.indexOf(':') >= 0 ? parseV6(s) : parseV4(s);
        if (b == null) {
            throw new IllegalArgumentException("'" + s + "' is not a valid IP address");
        }
        return new IpAddress(b);
    }

    static IpAddress ofBytes(byte[] bytes) {
        if (bytes.length != 4 && bytes.length != 16) {
            throw new IllegalArgumentException("an IP address has 4 or 16 bytes, not " + bytes.length);
        }
        return new IpAddress(bytes.clone());
    }

    public IpFamily family() {
        return bytes.length == 4 ? IpFamily.IPV4 : IpFamily.IPV6;
    }

    public boolean isLoopback() {
        if (bytes.length == 4) {
            return (bytes[0] & 0xff) == 127;
        }
        for (int i = 0; i < 15; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[15] == 1;
    }

    /**
     * {@code ::ffff:a.b.c.d}: an IPv4 address written as IPv6. Software disagrees on which family it
     * is, so the API server's strict validation (KEP-4858) refuses it in every address field.
     */
    public boolean isIpv4Mapped() {
        if (bytes.length != 16) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return (bytes[10] & 0xff) == 0xff && (bytes[11] & 0xff) == 0xff;
    }

    /** The range the API server refuses for endpoints and external IPs that this address lies in, if any. */
    public Optional<SpecialRange> specialRange() {
        return SpecialRange.of(this);
    }

    byte[] bytes() {
        return bytes.clone();
    }

    /** The address in network byte order: 4 or 16 bytes, a copy. */
    public byte[] toBytes() {
        return bytes.clone();
    }

    int byteAt(int i) {
        return bytes[i] & 0xff;
    }

    int length() {
        return bytes.length;
    }

    /** The address with a port, as ipvsadm, iptables' DNAT and URLs write it: {@code 10.0.0.1:80}, {@code [fd00::1]:80}. */
    public String withPort(int port) {
        return family() == IpFamily.IPV6 ? "[" + this + "]:" + port : this + ":" + port;
    }

    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpAddress other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** Orders IPv4 before IPv6, then numerically. */
    @Override
    public int compareTo(IpAddress o) {
        if (bytes.length != o.bytes.length) {
            return Integer.compare(bytes.length, o.bytes.length);
        }
        return Arrays.compareUnsigned(bytes, o.bytes);
    }

    private static byte[] parseV4(String s) {
        byte[] out = new byte[4];
        int part = 0;
        int i = 0;
        int n = s.length();
        while (part < 4) {
            int start = i;
            int value = 0;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                value = value * 10 + (s.charAt(i) - '0');
                if (value > 255) {
                    return null;
                }
                i++;
            }
            int digits = i - start;
            // Leading zeros are ambiguous (octal in some parsers), so they are refused.
            if (digits == 0 || (digits > 1 && s.charAt(start) == '0')) {
                return null;
            }
            out[part++] = (byte) value;
            if (part < 4) {
                if (i >= n || s.charAt(i) != '.') {
                    return null;
                }
                i++;
            }
        }
        return i == n ? out : null;
    }

    private static byte[] parseV6(String s) {
        int n = s.length();
        if (n > 45) {
            return null;
        }
        byte[] out = new byte[16];
        int[] groups = new int[8];
        int count = 0;
        int doubleColonAt = -1;
        int i = 0;
        if (s.startsWith("::")) {
            doubleColonAt = 0;
            i = 2;
            if (i == n) {
                return out;
            }
        } else if (s.charAt(0) == ':') {
            return null;
        }
        while (i < n) {
            if (count == 8) {
                return null;
            }
            // An embedded IPv4 tail, as in ::ffff:10.0.0.1.
            int nextColon = s.indexOf(':', i);
            String token = nextColon < 0 ? s.substring(i) : s.substring(i, nextColon);
            if (token.indexOf('.') >= 0) {
                if (nextColon >= 0 || count > 6) {
                    return null;
                }
                byte[] v4 = parseV4(token);
                if (v4 == null) {
                    return null;
                }
                groups[count++] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
                groups[count++] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
                i = n;
                break;
            }
            if (token.isEmpty() || token.length() > 4) {
                return null;
            }
            int value = 0;
            for (int k = 0; k < token.length(); k++) {
                int d = Character.digit(token.charAt(k), 16);
                if (d < 0) {
                    return null;
                }
                value = value * 16 + d;
            }
            groups[count++] = value;
            if (nextColon < 0) {
                i = n;
            } else if (nextColon + 1 < n && s.charAt(nextColon + 1) == ':') {
                if (doubleColonAt >= 0) {
                    return null;
                }
                doubleColonAt = count;
                i = nextColon + 2;
            } else {
                if (nextColon + 1 == n) {
                    return null;
                }
                i = nextColon + 1;
            }
        }
        if (doubleColonAt < 0 && count != 8) {
            return null;
        }
        if (doubleColonAt >= 0 && count == 8) {
            return null;
        }
        int[] full = new int[8];
        if (doubleColonAt < 0) {
            full = groups;
        } else {
            int tail = count - doubleColonAt;
            System.arraycopy(groups, 0, full, 0, doubleColonAt);
            System.arraycopy(groups, doubleColonAt, full, 8 - tail, tail);
        }
        for (int g = 0; g < 8; g++) {
            out[2 * g] = (byte) (full[g] >> 8);
            out[2 * g + 1] = (byte) full[g];
        }
        return out;
    }

    private static String formatV4(byte[] b) {
        return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
    }

    /** RFC 5952: lower case, no leading zeros, the longest run (2+) of zero groups as "::". */
    private static String formatV6(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        // Go prints IPv4-mapped addresses as plain IPv4; kube-proxy would too. Keep them IPv6 but
        // in the ::ffff:a.b.c.d form, which is what RFC 5952 section 5 recommends.
        boolean mapped = g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0xffff;
        if (mapped) {
            return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (g[i] == 0) {
                int j = i;
                while (j < 8 && g[j] == 0) {
                    j++;
                }
                if (j - i > bestLen) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        if (bestLen < 2) {
            bestStart = -1;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
