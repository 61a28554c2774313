package io.rulesync.model.rules;

/** The iptables tables rulesync writes, in the order kube-proxy's restore input lists them. */
public enum Table {
    FILTER("filter"),
    NAT("nat");

    private final String restoreName;

    Table(String restoreName) {
        this.restoreName = restoreName;
    }

    /** The name after {@code *} in iptables-restore input. */
    public String restoreName() {
        return restoreName;
    }
}
