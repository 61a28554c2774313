package io.rulesync.model.rules;

import java.util.Optional;

/**
 * A Service port's own chains, named as kube-proxy names them: a prefix plus a {@value #HASH_LENGTH}-character
 * hash in the RFC 4648 base32 alphabet. This is the one place that says what such a name looks like: the
 * compiler forms names through {@link #named(String)}, and the agent's rule grammar recognises them through
 * {@link #of(String)}, so what is written and what is accepted cannot drift apart. (kube-proxy's older
 * KUBE-XLB- chains are SVL now; rulesync neither writes nor owns XLB.)
 */
public enum ServiceChain {
    /** The port's cluster-traffic chain. */
    SVC("KUBE-SVC-"),
    /** The port's node-local endpoints (externalTrafficPolicy/internalTrafficPolicy Local). */
    SVL("KUBE-SVL-"),
    /** The port's external-traffic chain. */
    EXT("KUBE-EXT-"),
    /** The port's load-balancer firewall (loadBalancerSourceRanges). */
    FW("KUBE-FW-"),
    /** One endpoint of the port; also the name of its session-affinity recent list. */
    SEP("KUBE-SEP-");

    /** How many hash characters follow the prefix: kube-proxy keeps the first 16 of base32(sha256(...)). */
    public static final int HASH_LENGTH = 16;
    /** The hash's alphabet: RFC 4648 base32, unpadded. */
    public static final String HASH_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    private final String prefix;

    ServiceChain(String prefix) {
        this.prefix = prefix;
    }

    /** What every chain of this kind starts with, e.g. {@code KUBE-SVC-}. */
    public String prefix() {
        return prefix;
    }

    /** This kind's chain for {@code hash}, which must be {@value #HASH_LENGTH} base32 characters. */
    public String named(String hash) {
        if (!isHash(hash, 0)) {
            throw new IllegalArgumentException("not a " + HASH_LENGTH + "-character base32 chain hash: " + hash);
        }
        return prefix + hash;
    }

    /** Whether {@code chain} is a chain of this kind: the prefix, then exactly a hash. */
    public boolean names(String chain) {
        return chain.startsWith(prefix) && isHash(chain, prefix.length());
    }

    /** The kind of a Service port's own chain, or empty for any other name (fixed chains included). */
    public static Optional<ServiceChain> of(String chain) {
        for (ServiceChain kind : values()) {
            if (kind.names(chain)) {
                return Optional.of(kind);
            }
        }
        return Optional.empty();
    }

    private static boolean isHash(String s, int from) {
        if (s.length() - from != HASH_LENGTH) {
            return false;
        }
        for (int i = from; i < s.length(); i++) {
            if (HASH_ALPHABET.indexOf(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }
}
