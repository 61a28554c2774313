package io.rulesync.testing.tiers;

/**
 * The tags that split the suite into tiers. A test with none of them is pure: no database, broker,
 * Spring context, kernel or host tool, and {@code mvn test -Punit} runs it. The {@code @Requires...}
 * annotations of {@code io.rulesync.testing.needs} carry these tags, so declaring what a test needs
 * also places it in its tier.
 */
public final class Tiers {
    /** PostgreSQL, Kafka (in-process or Testcontainers), Spring contexts. */
    public static final String INTEGRATION = "integration";
    /** Network namespaces, host tools (iptables, ipset, ipvsadm, conntrack, ip), kernel features. */
    public static final String KERNEL = "kernel";
    /** The whole pipeline, from a watched cluster to programmed nodes. */
    public static final String E2E = "e2e";

    private Tiers() {}
}
