package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/** One {@code -m MODULE ...} match of a rule, limited to the modules and options the compiler writes. */
public sealed interface Match {

    /** The {@code -m ...} text as {@code iptables -S} prints it. */
    String kernelText(IpFamily family);

    /** {@code -m comment --comment TEXT}. */
    record Comment(String text) implements Match {
        public Comment {
            Objects.requireNonNull(text, "text");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m comment --comment " + KernelText.string(text);
        }
    }

    /** {@code -m tcp|udp|sctp [--dport N]}; the compiler writes it without a port in DNAT rules. */
    record Port(Protocol protocol, OptionalInt destinationPort) implements Match {
        public Port {
            Objects.requireNonNull(protocol, "protocol");
            Objects.requireNonNull(destinationPort, "destinationPort");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m " + protocol.lower()
                    + (destinationPort.isPresent() ? " --dport " + destinationPort.getAsInt() : "");
        }
    }

    /** {@code -m addrtype --dst-type LOCAL} or {@code --src-type LOCAL}. */
    record AddrType(boolean source, String type) implements Match {
        public AddrType {
            Objects.requireNonNull(type, "type");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m addrtype " + (source ? "--src-type " : "--dst-type ") + type;
        }
    }

    /** {@code -m statistic --mode random --probability P}, P as the compiler wrote it. */
    record Statistic(String probability) implements Match {
        public Statistic {
            Objects.requireNonNull(probability, "probability");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-m statistic --mode random --probability " + KernelText.probability(probability);
        }
    }

    /**
     * {@code -m recent --name N --set} (session affinity: remember the client) or
     * {@code -m recent --name N --rcheck --seconds S --reap} (send a known client back).
     */
    record Recent(String name, boolean set, OptionalInt seconds, boolean reap) implements Match {
        public Recent {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(seconds, "seconds");
        }

        @Override
        public String kernelText(IpFamily family) {
            // The kernel prints the defaults the compiler leaves out: the full-length source mask and --rsource.
            String mask = family == IpFamily.IPV4 ? "255.255.255.255" : "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
            StringBuilder sb = new StringBuilder("-m recent");
            sb.append(set ? " --set" : " --rcheck");
            if (seconds.isPresent()) {
                sb.append(" --seconds ").append(seconds.getAsInt());
            }
            if (reap) {
                sb.append(" --reap");
            }
            return sb.append(" --name ").append(name).append(" --mask ").append(mask).append(" --rsource").toString();
        }
    }

    /** {@code -m mark [!] --mark VALUE/MASK}. */
    record Mark(boolean negated, long value, long mask) implements Match {
        @Override
        public String kernelText(IpFamily family) {
            // A full mask is the default and is not printed.
            String m = mask == 0xffffffffL ? "" : "/" + KernelText.hex(mask);
            return "-m mark " + (negated ? "! " : "") + "--mark " + KernelText.hex(value) + m;
        }
    }

    /** {@code -m conntrack [!] --ctstate S1,S2}. */
    record Conntrack(boolean negated, List<CtState> states) implements Match {
        public Conntrack {
            states = List.copyOf(states);
        }

        @Override
        public String kernelText(IpFamily family) {
            // The kernel keeps a bit set and prints it in bit order, whatever order it was given in.
            StringBuilder sb = new StringBuilder("-m conntrack ").append(negated ? "! " : "").append("--ctstate ");
            String sep = "";
            for (CtState s : CtState.values()) {
                if (states.contains(s)) {
                    sb.append(sep).append(s.name());
                    sep = ",";
                }
            }
            return sb.toString();
        }
    }

    /** Conntrack states in the order libxt_conntrack prints them. */
    enum CtState {
        INVALID, NEW, RELATED, ESTABLISHED, UNTRACKED, SNAT, DNAT
    }
}
