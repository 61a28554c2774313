package io.rulesync.model.cluster;

/**
 * A validated CIDR, kept in the masked form Go's {@code net.IPNet.String()} prints
 * ({@code 10.1.2.3/8} becomes {@code 10.0.0.0/8}), which is what kube-proxy writes.
 */
public final class Cidr {
    private final IpAddress network;
    private final int prefix;

    private Cidr(IpAddress network, int prefix) {
        this.network = network;
        this.prefix = prefix;
    }

    /** Parses {@code addr/prefix}; surrounding whitespace is trimmed, as kube-proxy does for source ranges. */
    public static Cidr parse(String s) {
        if (s == null) {
            throw new IllegalArgumentException("empty CIDR");
        }
        String t = s.strip();
        int slash = t.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("'" + s + "' is not a CIDR (expected address/prefix)");
        }
        IpAddress addr;
        try {
            addr = IpAddress.parse(t.substring(0, slash));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + s + "' is not a valid CIDR: " + e.getMessage());
        }
        String p = t.substring(slash + 1);
        int max = addr.length() * 8;
        int prefix;
        if (p.isEmpty()
                || p.length() > 3
                || !p.chars().allMatch(Character::isDigit)
                || (p.length() > 1 && p.charAt(0) == '0')
                || (prefix = Integer.parseInt(p)) > max) {
            throw new IllegalArgumentException("'" + s + "' has an invalid prefix length (0-" + max + ")");
        }
        byte[] b = addr.bytes();
        for (int bit = prefix; bit < max; bit++) {
            b[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return new Cidr(IpAddress.ofBytes(b), prefix);
    }

    /** The single address {@code ip} as a /32 or /128. */
    public static Cidr host(IpAddress ip) {
        return new Cidr(ip, ip.length() * 8);
    }

    /** Whether this CIDR holds one address (a /32 or /128). */
    public boolean isHost() {
        return prefix == network.length() * 8;
    }

    public IpFamily family() {
        return network.family();
    }

    public IpAddress network() {
        return network;
    }

    public int prefix() {
        return prefix;
    }

    public boolean contains(IpAddress ip) {
        if (ip == null || ip.length() != network.length()) {
            return false;
        }
        for (int bit = 0; bit < prefix; bit++) {
            int mask = 0x80 >>> (bit % 8);
            if ((ip.byteAt(bit / 8) & mask) != (network.byteAt(bit / 8) & mask)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return network + "/" + prefix;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Cidr other && other.prefix == prefix && other.network.equals(network);
    }

    @Override
    public int hashCode() {
        return network.hashCode() * 31 + prefix;
    }
}
