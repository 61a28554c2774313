package io.rulesync.model.cluster;

/** The address family of an IP, a rule set, or an EndpointSlice. kube-proxy runs one proxier per family. */
public enum IpFamily {
    IPV4,
    IPV6;

    /** The spelling used on the command line and in files: {@code ipv4} / {@code ipv6}. */
    public String id() {
        return this == IPV4 ? "ipv4" : "ipv6";
    }

    public static IpFamily fromId(String id) {
        return switch (id) {
            case "ipv4", "IPv4" -> IPV4;
            case "ipv6", "IPv6" -> IPV6;
            default -> throw new IllegalArgumentException("unknown IP family '" + id + "' (expected ipv4 or ipv6)");
        };
    }
}
