package io.rulesync.model.cluster;

/** The L4 protocols a Service port can use. */
public enum Protocol {
    TCP,
    UDP,
    SCTP;

    /** The lower-case spelling kube-proxy uses in {@code -m tcp -p tcp} and in chain-name hashes. */
    public String lower() {
        return switch (this) {
            case TCP -> "tcp";
            case UDP -> "udp";
            case SCTP -> "sctp";
        };
    }
}
