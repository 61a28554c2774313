package io.rulesync.model.iptables;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.util.Objects;

/** The {@code -j ...} part of a rule, limited to the targets the compiler writes. */
public sealed interface Target {

    /** The text as written to {@code iptables-restore}. */
    String restoreText();

    /** The text as {@code iptables -S} prints it. */
    String kernelText(IpFamily family);

    /** A jump to one of rulesync's own chains; {@link RuleGrammar} checks which, per table. */
    record Jump(String chain) implements Target {
        public Jump {
            Objects.requireNonNull(chain, "chain");
        }

        @Override
        public String restoreText() {
            return "-j " + chain;
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** A built-in target without options. */
    enum Verdict implements Target {
        ACCEPT,
        DROP,
        RETURN;

        @Override
        public String restoreText() {
            return "-j " + name();
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }

    /** REJECT with the default reply, which the kernel spells out. */
    record Reject() implements Target {
        @Override
        public String restoreText() {
            return "-j REJECT";
        }

        @Override
        public String kernelText(IpFamily family) {
            return "-j REJECT --reject-with "
                    + (family == IpFamily.IPV4 ? "icmp-port-unreachable" : "icmp6-port-unreachable");
        }
    }

    /** {@code -j DNAT --to-destination IP:PORT} ({@code [IP]:PORT} for IPv6). */
    record Dnat(IpAddress address, int port) implements Target {
        public Dnat {
            Objects.requireNonNull(address, "address");
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("--to-destination port " + port + ": not a number in 1-65535");
            }
        }

        @Override
        public String restoreText() {
            return "-j DNAT --to-destination " + address.withPort(port);
        }

        @Override
        public String kernelText(IpFamily family) {
            String host = KernelText.address(address);
            return "-j DNAT --to-destination " + (address.family() == IpFamily.IPV6 ? "[" + host + "]" : host) + ":"
                    + port;
        }
    }

    /** {@code -j MARK --or-mark V} or {@code --xor-mark V}. */
    record SetMark(boolean xor, Hex value) implements Target {
        public SetMark {
            Objects.requireNonNull(value, "value");
        }

        @Override
        public String restoreText() {
            return "-j MARK " + (xor ? "--xor-mark " : "--or-mark ") + value;
        }

        @Override
        public String kernelText(IpFamily family) {
            // MARK keeps one (value, mask) pair: or-mark V is V/V, xor-mark V is V/0.
            return "-j MARK --set-xmark " + value.kernelText() + "/" + KernelText.hex(xor ? 0 : value.value());
        }
    }

    /** {@code -j MASQUERADE [--random-fully]}. */
    record Masquerade(boolean randomFully) implements Target {
        @Override
        public String restoreText() {
            return "-j MASQUERADE" + (randomFully ? " --random-fully" : "");
        }

        @Override
        public String kernelText(IpFamily family) {
            return restoreText();
        }
    }
}
