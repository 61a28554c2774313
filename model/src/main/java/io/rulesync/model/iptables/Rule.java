package io.rulesync.model.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One iptables rule of the kind rulesync writes: its parts in the order written, then its target. The
 * compiler builds rules with {@link #with()} and stores {@link #restoreForm()}; the agent reads that
 * text back with {@link RuleGrammar}, which gives the same rule, and compares {@link #kernelForm} with
 * what the kernel lists.
 *
 * @param target empty for a rule that only counts, like the last rule of a KUBE-FW chain
 */
public record Rule(List<Part> parts, Optional<Target> target) {
    /** The kinds of part that appear at most once, besides -s and -d. */
    private static final List<Class<? extends Part>> KINDS = List.of(
            Part.Proto.class,
            Part.PortMatch.class,
            Part.DestinationPort.class,
            Part.Comment.class,
            Part.AddrType.class,
            Part.Statistic.class,
            Part.Recent.class,
            Part.Mark.class,
            Part.Conntrack.class,
            Part.SetMatch.class,
            Part.NotBridged.class,
            Part.Ipvs.class);

    public Rule {
        parts = List.copyOf(parts);
        Objects.requireNonNull(target, "target");
        if (parts.isEmpty() && target.isEmpty()) {
            throw new IllegalArgumentException("the rule is empty");
        }
        checkStructure(parts);
    }

    /** Starts a rule; the parts are written in the order they are added. */
    public static Builder with() {
        return new Builder();
    }

    /** The body of an {@code -A CHAIN} line of {@code iptables-restore} input. */
    public String restoreForm() {
        // Most rules the compiler writes fit 160 characters; indexing avoids an iterator per rule.
        StringBuilder sb = new StringBuilder(160);
        for (int i = 0; i < parts.size(); i++) {
            if (i > 0) {
                sb.append(' ');
            }
            parts.get(i).appendTo(sb);
        }
        if (target.isPresent()) {
            (sb.isEmpty() ? sb : sb.append(' ')).append(target.get().restoreText());
        }
        return sb.toString();
    }

    /**
     * The line {@code iptables -t TABLE -S CHAIN} prints for this rule: {@code -A CHAIN}, then source,
     * destination and protocol (fixed places, whatever order they were written in), then the matches in
     * their {@code -m} order with a port match's {@code --dport}, then the target.
     */
    public String kernelForm(IpFamily family, String chain) {
        StringBuilder sb = new StringBuilder(160).append("-A ").append(chain);
        source().ifPresent(a -> append(sb, a.kernelText()));
        destination().ifPresent(a -> append(sb, a.kernelText()));
        protocol().ifPresent(p -> append(sb, "-p " + p.lower()));
        OptionalInt dport = destinationPort();
        for (Part.Match m : matches()) {
            append(sb, m.kernelText(family));
            if (m instanceof Part.PortMatch && dport.isPresent()) {
                sb.append(" --dport ").append(dport.getAsInt());
            }
        }
        target.ifPresent(t -> append(sb, t.kernelText(family)));
        return sb.toString();
    }

    public Optional<Part.Address> source() {
        return address(true);
    }

    public Optional<Part.Address> destination() {
        return address(false);
    }

    public Optional<Protocol> protocol() {
        return first(Part.Proto.class).map(Part.Proto::protocol);
    }

    public OptionalInt destinationPort() {
        return first(Part.DestinationPort.class)
                .map(d -> OptionalInt.of(d.port()))
                .orElse(OptionalInt.empty());
    }

    /** The {@code -m} matches in the order written. */
    public List<Part.Match> matches() {
        List<Part.Match> out = new ArrayList<>(parts.size());
        for (Part p : parts) {
            if (p instanceof Part.Match m) {
                out.add(m);
            }
        }
        return out;
    }

    /** The first part of a kind, such as the rule's {@code Part.AddrType}. */
    public <T extends Part> Optional<T> first(Class<T> kind) {
        for (Part p : parts) {
            if (kind.isInstance(p)) {
                return Optional.of(kind.cast(p));
            }
        }
        return Optional.empty();
    }

    private Optional<Part.Address> address(boolean source) {
        for (Part p : parts) {
            if (p instanceof Part.Address a && a.source() == source) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    private static void append(StringBuilder sb, String part) {
        if (!part.isEmpty()) {
            sb.append(' ').append(part);
        }
    }

    /**
     * What iptables itself requires of the parts, plus "each at most once", which the compiler never
     * breaks. A {@code -p} without its port match is valid iptables (IPVS mode writes it);
     * {@link RuleGrammar} refuses it in iptables mode's rules.
     */
    private static void checkStructure(List<Part> parts) {
        Protocol proto = null;
        Protocol portMatch = null;
        int seen = 0;
        for (Part p : parts) {
            int kind = 1 << kind(p);
            if ((seen & kind) != 0) {
                if (p instanceof Part.PortMatch pm && portMatch != pm.protocol()) {
                    throw new IllegalArgumentException(
                            describe(p) + " after -m " + portMatch.lower() + ": a rule has one protocol match");
                }
                throw new IllegalArgumentException(describe(p) + " appears twice");
            }
            seen |= kind;
            if (p instanceof Part.Proto pr) {
                proto = pr.protocol();
            } else if (p instanceof Part.PortMatch pm) {
                portMatch = pm.protocol();
            } else if (p instanceof Part.DestinationPort && portMatch == null) {
                throw new IllegalArgumentException("--dport without -m tcp, -m udp or -m sctp before it");
            }
        }
        if (portMatch != null && portMatch != proto) {
            throw new IllegalArgumentException("-m " + portMatch.lower() + " needs -p " + portMatch.lower()
                    + (proto != null ? ", not -p " + proto.lower() : ""));
        }
    }

    /** A number per kind of part; -s and -d are different kinds. */
    private static int kind(Part p) {
        if (p instanceof Part.Address a) {
            return a.source() ? 0 : 1;
        }
        Class<?> c = p.getClass();
        for (int i = 0; i < KINDS.size(); i++) {
            if (KINDS.get(i) == c) {
                return i + 2;
            }
        }
        throw new IllegalStateException("a part without a kind: " + c);
    }

    private static String describe(Part p) {
        if (p instanceof Part.Address a) {
            return a.flag();
        }
        if (p instanceof Part.Proto) {
            return "-p";
        }
        if (p instanceof Part.DestinationPort) {
            return "--dport";
        }
        String text = p.restoreText();
        int space = text.indexOf(' ', 3);
        return space < 0 ? text : text.substring(0, space);
    }

    // Parts without a value beyond their protocol, made once: the compiler writes one per rule.
    private static final Map<Protocol, Part.PortMatch> PORT_MATCHES = new EnumMap<>(Protocol.class);
    private static final Map<Protocol, Part.Proto> PROTOS = new EnumMap<>(Protocol.class);

    static {
        for (Protocol p : Protocol.values()) {
            PORT_MATCHES.put(p, new Part.PortMatch(p));
            PROTOS.put(p, new Part.Proto(p));
        }
    }

    /** Adds parts in the order written; ends with the target. */
    public static final class Builder {
        private final List<Part> parts = new ArrayList<>(6);

        private Builder() {}

        /** {@code -m comment --comment "TEXT"}. */
        public Builder comment(String text) {
            return add(new Part.Comment(text, true));
        }

        /** {@code -m comment --comment TEXT}, unquoted, as kube-proxy writes a bare Service port name. */
        public Builder bareComment(String text) {
            return add(new Part.Comment(text, false));
        }

        /** {@code -m tcp -p tcp}: kube-proxy's way to name the protocol, ready for a {@code --dport}. */
        public Builder protocol(Protocol protocol) {
            return add(PORT_MATCHES.get(protocol)).add(PROTOS.get(protocol));
        }

        public Builder destinationPort(int port) {
            return add(new Part.DestinationPort(port));
        }

        /** {@code -d IP}. */
        public Builder destination(IpAddress ip) {
            return add(new Part.Address(false, false, Cidr.host(ip), false));
        }

        /** {@code -d CIDR} or {@code ! -d CIDR}. */
        public Builder destination(boolean negated, Cidr cidr) {
            return add(new Part.Address(false, negated, cidr, true));
        }

        /** {@code -s IP}. */
        public Builder source(IpAddress ip) {
            return add(new Part.Address(true, false, Cidr.host(ip), false));
        }

        /** {@code -s CIDR} or {@code ! -s CIDR}. */
        public Builder source(boolean negated, Cidr cidr) {
            return add(new Part.Address(true, negated, cidr, true));
        }

        /** {@code -m addrtype --src-type LOCAL} (source) or {@code --dst-type LOCAL}. */
        public Builder local(boolean source) {
            return add(new Part.AddrType(source));
        }

        public Builder add(Part part) {
            parts.add(Objects.requireNonNull(part, "part"));
            return this;
        }

        public Rule jump(String chain) {
            return then(new Target.Jump(chain));
        }

        public Rule then(Target target) {
            return new Rule(parts, Optional.of(target));
        }

        /** A rule that only counts packets. */
        public Rule noTarget() {
            return new Rule(parts, Optional.empty());
        }
    }
}
