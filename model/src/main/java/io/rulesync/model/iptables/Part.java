package io.rulesync.model.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Ports;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.rules.ServiceChain;
import io.rulesync.model.text.Printable;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;

/**
 * One part of an iptables rule before its target, as written to {@code iptables-restore}: an address,
 * a protocol, a {@code -m} match with its options, or a port module's {@code --dport}. A rule keeps its
 * parts in the order written, because kube-proxy's order ({@code -m tcp -p tcp -d IP --dport PORT}) is
 * part of what the compiler matches byte for byte; {@link Rule#kernelForm} puts them in the order the
 * kernel prints. Each part checks its values, so a part that exists can be written safely.
 */
public sealed interface Part {

    /** The text as written to {@code iptables-restore}. */
    String restoreText();

    /** {@link #restoreText} appended to {@code sb}; the parts a compiler writes most append without a copy. */
    default void appendTo(StringBuilder sb) {
        sb.append(restoreText());
    }

    /** A {@code -m} module with its options. */
    sealed interface Match extends Part {
        /** The text as {@code iptables -S} prints it. */
        String kernelText(IpFamily family);
    }

    /**
     * {@code [!] -s X} or {@code [!] -d X}. A single address is written bare ({@code prefixWritten} false) or
     * as {@code /32}; the kernel stores and prints both as a CIDR.
     */
    record Address(boolean source, boolean negated, Cidr cidr, boolean prefixWritten) implements Part {
        public Address {
            Objects.requireNonNull(cidr, "cidr");
            if (!prefixWritten && !cidr.isHost()) {
                throw new IllegalArgumentException(
                        (source ? "-s " : "-d ") + cidr + ": only a single address is written without a prefix");
            }
            if (negated && cidr.prefix() == 0) {
                throw new IllegalArgumentException("! " + (source ? "-s " : "-d ") + cidr
                        + ": a negated /0 matches nothing (and iptables-nft refuses it)");
            }
        }

        public String flag() {
            return source ? "-s" : "-d";
        }

        @Override
        public String restoreText() {
            StringBuilder sb = new StringBuilder(24);
            appendTo(sb);
            return sb.toString();
        }

        @Override
        public void appendTo(StringBuilder sb) {
            if (negated) {
                sb.append("! ");
            }
            sb.append(source ? "-s " : "-d ").append(cidr.network());
            if (prefixWritten) {
                sb.append('/').append(cidr.prefix());
            }
        }

        /** Empty for a match-all /0, which iptables stores as no match at all. */
        String kernelText() {
            if (cidr.prefix() == 0 && !negated) {
                return "";
            }
            return (negated ? "! " : "") + flag() + " " + KernelText.cidr(cidr);
        }
    }

    /** {@code -p tcp|udp|sctp}; a rule that has it has the protocol's own match too. */
    record Proto(Protocol protocol) implements Part {
        public Proto {
            Objects.requireNonNull(protocol, "protocol");
        }

        @Override
        public String restoreText() {
            return "-p " + protocol.lower();
        }
    }

    /** {@code -m tcp|udp|sctp}; its {@code --dport}, when there is one, is a part of its own. */
    record PortMatch(Protocol protocol) implements Match {
        public PortMatch {
            Objects.requireNonNull(protocol, "protocol");
        }

        @Override
        public String restoreText() {
            return "-m " + protocol.lower();
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** {@code --dport N}, an option of the rule's port match that kube-proxy writes after {@code -d}. */
    record DestinationPort(int port) implements Part {
        public DestinationPort {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("--dport " + port + ": not a number in 1-65535");
            }
        }

        @Override
        public String restoreText() {
            return "--dport " + port;
        }

        @Override
        public void appendTo(StringBuilder sb) {
            sb.append("--dport ").append(port);
        }
    }

    /** {@code -m comment --comment TEXT}, in double quotes or bare as kube-proxy writes it. */
    record Comment(String text, boolean quoted) implements Match {
        /** XT_MAX_COMMENT_LEN is 256 including the terminating NUL. */
        public static final int MAX_LENGTH = 255;
        /**
         * What the compiler puts into comments besides letters and digits: Kubernetes names, IPs,
         * {@code ip:port}, {@code [ip]:port}, {@code ->} and kube-proxy's fixed texts (IPVS mode's hold
         * {@code + = , '}). No double quote, backslash or control character, so a comment cannot end its
         * quoted string or start a new line.
         */
        private static final String PUNCTUATION = " ./:;[]>_-+=,'";

        public Comment {
            Objects.requireNonNull(text, "text");
            if (text.length() > MAX_LENGTH) {
                throw new IllegalArgumentException(
                        "--comment: " + text.length() + " characters, the kernel keeps at most " + MAX_LENGTH);
            }
            if (!isCommentText(text)) {
                throw new IllegalArgumentException(
                        "--comment " + Printable.quoted(text)
                                + ": only letters, digits, space and . / : ; [ ] > _ - + = , ' are allowed, starting with a letter or digit");
            }
            if (!quoted && (text.indexOf(' ') >= 0 || text.indexOf('\'') >= 0)) {
                throw new IllegalArgumentException("--comment " + Printable.quoted(text)
                        + ": a comment with spaces or quotes is written in double quotes");
            }
        }

        // A loop, not a regex: the compiler builds one comment per rule, a few hundred thousand per version.
        private static final boolean[] ALLOWED = new boolean[128];

        static {
            for (char c = 0; c < 128; c++) {
                ALLOWED[c] = c >= 'a' && c <= 'z'
                        || c >= 'A' && c <= 'Z'
                        || c >= '0' && c <= '9'
                        || PUNCTUATION.indexOf(c) >= 0;
            }
        }

        private static boolean isCommentText(String text) {
            if (text.isEmpty() || !Character.isLetterOrDigit(text.charAt(0))) {
                return false;
            }
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c >= 128 || !ALLOWED[c]) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String restoreText() {
            return "-m comment --comment " + (quoted ? "\"" + text + "\"" : text);
        }

        @Override
        public void appendTo(StringBuilder sb) {
            sb.append("-m comment --comment ");
            if (quoted) {
                sb.append('"').append(text).append('"');
            } else {
                sb.append(text);
            }
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m comment --comment " + KernelText.string(text);
        }
    }

    /** {@code -m addrtype [!] --src-type LOCAL} or {@code --dst-type LOCAL}. */
    record AddrType(boolean source, boolean negated) implements Match {
        public AddrType(boolean source) {
            this(source, false);
        }

        @Override
        public String restoreText() {
            return "-m addrtype " + (negated ? "! " : "") + (source ? "--src-type" : "--dst-type") + " LOCAL";
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** {@code -m statistic --mode random --probability P}, P as the compiler wrote it ({@code %0.10f}). */
    record Statistic(String probability) implements Match {
        public Statistic {
            Objects.requireNonNull(probability, "probability");
            int n = probability.length();
            if (n < 3
                    || n > 12
                    || probability.charAt(1) != '.'
                    || probability.charAt(0) != '0' && probability.charAt(0) != '1') {
                throw new IllegalArgumentException(
                        "--probability " + Printable.shown(probability) + ": not a decimal like 0.5000000000");
            }
            boolean fractionZero = true;
            for (int i = 2; i < n; i++) {
                char c = probability.charAt(i);
                if (c < '0' || c > '9') {
                    throw new IllegalArgumentException(
                            "--probability " + Printable.shown(probability) + ": not a decimal like 0.5000000000");
                }
                fractionZero &= c == '0';
            }
            // In (0, 1]: 0.x with a digit other than 0, or 1.000...
            if (probability.charAt(0) == '0' ? fractionZero : !fractionZero) {
                throw new IllegalArgumentException("--probability " + probability + ": not in (0, 1]");
            }
        }

        @Override
        public String restoreText() {
            return "-m statistic --mode random --probability " + probability;
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m statistic --mode random --probability " + KernelText.probability(probability);
        }
    }

    /**
     * Session affinity: {@code -m recent --name SEP --set} remembers the client,
     * {@code -m recent --name SEP --rcheck --seconds S --reap} sends a known client back.
     *
     * @param seconds 0 for {@code --set}
     */
    record Recent(String name, boolean set, int seconds) implements Match {
        public Recent {
            Objects.requireNonNull(name, "name");
            if (!ServiceChain.SEP.names(name)) {
                throw new IllegalArgumentException(
                        "--name " + Printable.shown(name) + ": rulesync names recent lists after KUBE-SEP-… chains");
            }
            if (set && seconds != 0) {
                throw new IllegalArgumentException("-m recent --set with --seconds is not something rulesync emits");
            }
            if (!set && (seconds < 1 || seconds > Ports.MAX_AFFINITY_TIMEOUT_SECONDS)) {
                throw new IllegalArgumentException(
                        "--seconds " + seconds + ": not a number in 1-" + Ports.MAX_AFFINITY_TIMEOUT_SECONDS);
            }
        }

        public static Recent remember(String name) {
            return new Recent(name, true, 0);
        }

        public static Recent check(String name, int seconds) {
            return new Recent(name, false, seconds);
        }

        @Override
        public String restoreText() {
            return "-m recent --name " + name + (set ? " --set" : " --rcheck --seconds " + seconds + " --reap");
        }

        @Override
        public String kernelText(IpFamily family) {
            // The kernel prints the defaults the compiler leaves out: the full-length source mask and --rsource.
            String mask = family == IpFamily.IPV4 ? "255.255.255.255" : "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
            return "-m recent" + (set ? " --set" : " --rcheck --seconds " + seconds + " --reap") + " --name " + name
                    + " --mask " + mask + " --rsource";
        }
    }

    /** {@code -m mark [!] --mark VALUE/MASK}. */
    record Mark(boolean negated, Hex value, Hex mask) implements Match {
        public Mark {
            Objects.requireNonNull(value, "value");
            Objects.requireNonNull(mask, "mask");
        }

        @Override
        public String restoreText() {
            return "-m mark " + (negated ? "! " : "") + "--mark " + value + "/" + mask;
        }

        @Override
        public String kernelText(IpFamily family) {
            // A full mask is the default and is not printed.
            String m = mask.value() == 0xffffffffL ? "" : "/" + mask.kernelText();
            return "-m mark " + (negated ? "! " : "") + "--mark " + value.kernelText() + m;
        }
    }

    /** {@code -m conntrack [!] --ctstate S1,S2}, states in the order written. */
    record Conntrack(boolean negated, List<CtState> states) implements Match {
        public Conntrack {
            states = List.copyOf(states);
            if (states.isEmpty()) {
                throw new IllegalArgumentException("--ctstate needs a state");
            }
            if (EnumSet.copyOf(states).size() != states.size()) {
                throw new IllegalArgumentException("--ctstate " + states + ": a state appears twice");
            }
        }

        @Override
        public String restoreText() {
            return "-m conntrack " + (negated ? "! " : "") + "--ctstate "
                    + String.join(",", states.stream().map(Enum::name).toList());
        }

        @Override
        public String kernelText(IpFamily family) {
            // The kernel keeps a bit set and prints it in bit order, whatever order it was given in.
            return "-m conntrack " + (negated ? "! " : "") + "--ctstate "
                    + String.join(
                            ",", EnumSet.copyOf(states).stream().map(Enum::name).toList());
        }
    }

    /** {@code -m set --match-set NAME FLAGS}: IPVS mode's lookups in its ipsets. */
    record SetMatch(String name, String flags) implements Match {
        private static final List<String> FLAGS = List.of("dst", "dst,dst", "src,dst", "dst,dst,src");

        public SetMatch {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(flags, "flags");
            // IPSET_MAXNAMELEN is 32 with the terminating NUL; kube-proxy's sets are KUBE-… in capitals.
            if (!name.startsWith("KUBE-")
                    || name.length() > 31
                    || !name.chars().allMatch(c -> c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-')) {
                throw new IllegalArgumentException(
                        "--match-set " + Printable.shown(name) + ": not one of kube-proxy's set names");
            }
            if (!FLAGS.contains(flags)) {
                throw new IllegalArgumentException(
                        "--match-set " + name + " " + Printable.shown(flags) + ": flags are one of " + FLAGS);
            }
        }

        @Override
        public String restoreText() {
            return "-m set --match-set " + name + " " + flags;
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** {@code -m physdev ! --physdev-is-in}: the packet did not come in through a bridge port. */
    record NotBridged() implements Match {
        @Override
        public String restoreText() {
            return "-m physdev ! --physdev-is-in";
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** {@code -m ipvs --vaddr IP --vproto P --vport N}: the packet belongs to that IPVS virtual server. */
    record Ipvs(IpAddress address, Protocol protocol, int port) implements Match {
        public Ipvs {
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(protocol, "protocol");
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("--vport " + port + ": not a number in 1-65535");
            }
        }

        @Override
        public String restoreText() {
            return "-m ipvs --vaddr " + address + " --vproto " + protocol.lower() + " --vport " + port;
        }

        /**
         * Not known: IPVS mode's rules are replaced whole and never compared with a listing, and this
         * host has no ip_vs module to show how libxt_ipvs prints the match.
         */
        @Override
        public String kernelText(IpFamily family) {
            throw new UnsupportedOperationException("the kernel form of -m ipvs is not known here");
        }
    }

    /** Conntrack states in the order libxt_conntrack prints them. */
    enum CtState {
        INVALID,
        NEW,
        RELATED,
        ESTABLISHED,
        UNTRACKED,
        SNAT,
        DNAT
    }
}
