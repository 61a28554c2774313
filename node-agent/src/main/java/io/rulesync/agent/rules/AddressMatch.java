package io.rulesync.agent.rules;

import io.rulesync.model.cluster.Cidr;
import java.util.Objects;

/**
 * A {@code -s}/{@code -d} match. A single address is held as a /32 or /128 CIDR, which is how the
 * kernel stores (and prints) it.
 */
public record AddressMatch(boolean negated, Cidr cidr) {
    public AddressMatch {
        Objects.requireNonNull(cidr, "cidr");
    }

    /** The {@code -s X}/{@code -d X} text as {@code iptables -S} prints it; empty for a match-all /0. */
    String kernelText(String flag) {
        if (cidr.prefix() == 0 && !negated) {
            // A /0 matches everything, so iptables stores no address match and prints nothing.
            return "";
        }
        return (negated ? "! " : "") + flag + " " + KernelText.cidr(cidr);
    }
}
