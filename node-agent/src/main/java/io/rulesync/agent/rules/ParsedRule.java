package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.rules.Table;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A rule that passed {@link RuleGrammar}: every part is a known option with a checked value.
 * Matches keep their {@code -m} order because the kernel keeps (and prints) them in that order.
 *
 * @param target empty for a rule that only counts, like the last rule of a KUBE-FW chain
 */
public record ParsedRule(
        Table table,
        IpFamily family,
        String chain,
        Optional<AddressMatch> source,
        Optional<AddressMatch> destination,
        Optional<Protocol> protocol,
        List<Match> matches,
        Optional<Target> target) {

    public ParsedRule {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(family, "family");
        Objects.requireNonNull(chain, "chain");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(protocol, "protocol");
        matches = List.copyOf(matches);
        Objects.requireNonNull(target, "target");
    }

    /**
     * The line {@code iptables -t TABLE -S CHAIN} prints for this rule: {@code -A CHAIN}, then
     * source, destination and protocol (fixed places, whatever order they were written in), then the
     * matches in their {@code -m} order, then the target.
     */
    public String kernelForm() {
        StringBuilder sb = new StringBuilder(160).append("-A ").append(chain);
        source.map(a -> a.kernelText("-s")).ifPresent(t -> append(sb, t));
        destination.map(a -> a.kernelText("-d")).ifPresent(t -> append(sb, t));
        protocol.ifPresent(p -> append(sb, "-p " + p.lower()));
        for (Match m : matches) {
            append(sb, m.kernelText(family));
        }
        target.ifPresent(t -> append(sb, t.kernelText(family)));
        return sb.toString();
    }

    private static void append(StringBuilder sb, String part) {
        if (!part.isEmpty()) {
            sb.append(' ').append(part);
        }
    }
}
