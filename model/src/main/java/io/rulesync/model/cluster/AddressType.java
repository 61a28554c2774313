package io.rulesync.model.cluster;

/** {@code addressType} of an EndpointSlice. kube-proxy ignores FQDN slices. */
public enum AddressType {
    IPV4("IPv4"),
    IPV6("IPv6"),
    FQDN("FQDN");

    private final String apiName;

    AddressType(String apiName) {
        this.apiName = apiName;
    }

    public String apiName() {
        return apiName;
    }

    public static AddressType fromApiName(String s) {
        for (AddressType t : values()) {
            if (t.apiName.equals(s)) {
                return t;
            }
        }
        throw new IllegalArgumentException(
                "'" + KubernetesNames.printable(s) + "' is not an address type (expected IPv4, IPv6 or FQDN)");
    }
}
