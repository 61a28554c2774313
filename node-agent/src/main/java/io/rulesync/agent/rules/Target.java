package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.Objects;

/** The {@code -j ...} part of a rule, limited to the targets the compiler writes. */
public sealed interface Target {

    /** The {@code -j ...} text as {@code iptables -S} prints it. */
    String kernelText(IpFamily family);

    /** A jump to one of rulesync's own chains. */
    record Jump(String chain) implements Target {
        public Jump {
            Objects.requireNonNull(chain, "chain");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-j " + chain;
        }
    }

    /** ACCEPT, DROP or RETURN: no options. */
    record Verdict(String name) implements Target {
        public Verdict {
            Objects.requireNonNull(name, "name");
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-j " + name;
        }
    }

    /** REJECT with the default reply, which the kernel spells out. */
    record Reject() implements Target {
        @Override
        public String kernelText(IpFamily family) {
            return "-j REJECT --reject-with " + (family == IpFamily.IPV4 ? "icmp-port-unreachable" : "icmp6-port-unreachable");
        }
    }

    /** {@code -j DNAT --to-destination IP:PORT} ({@code [IP]:PORT} for IPv6). */
    record Dnat(IpAddress address, int port) implements Target {
        public Dnat {
            Objects.requireNonNull(address, "address");
        }

        @Override
        public String kernelText(IpFamily family) {
            String host = KernelText.address(address);
            return "-j DNAT --to-destination " + (address.family() == IpFamily.IPV6 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** {@code -j MARK --or-mark V} or {@code --xor-mark V}. */
    record SetMark(boolean xor, long value) implements Target {
        @Override
        public String kernelText(IpFamily family) {
            // MARK keeps one (value, mask) pair: or-mark V is V/V, xor-mark V is V/0.
            return "-j MARK --set-xmark " + KernelText.hex(value) + "/" + KernelText.hex(xor ? 0 : value);
        }
    }

    /** {@code -j MASQUERADE [--random-fully]}. */
    record Masquerade(boolean randomFully) implements Target {
        @Override
        public String kernelText(IpFamily family) {
            return "-j MASQUERADE" + (randomFully ? " --random-fully" : "");
        }
    }
}
