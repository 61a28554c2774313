package io.rulesync.model.iptables;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How iptables 1.8 ({@code -S}) prints values that it stores in a different form than it reads.
 * Each method mirrors the libxtables/extension code that prints the value, checked against the
 * kernel by {@code RuleKernelFormNamespaceTest}.
 */
final class KernelText {
    private static final BigDecimal TWO_POW_31 = BigDecimal.valueOf(0x80000000L);
    // glibc inet_ntop prints an address whose first 96 bits are zero (and the next 16 are not) in
    // the deprecated IPv4-compatible form ::a.b.c.d; IpAddress (RFC 5952) prints ::x:y.
    private static final Pattern IPV4_COMPATIBLE = Pattern.compile("::([0-9a-f]{1,4}):([0-9a-f]{1,4})");
    private static final String NO_QUOTE_CHARS = "_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    private KernelText() {}

    /** An address as inet_ntop prints it. */
    static String address(IpAddress ip) {
        String text = ip.toString();
        if (ip.family() == IpFamily.IPV6) {
            Matcher m = IPV4_COMPATIBLE.matcher(text);
            if (m.matches()) {
                int hi = Integer.parseInt(m.group(1), 16);
                int lo = Integer.parseInt(m.group(2), 16);
                return "::" + (hi >> 8) + "." + (hi & 0xff) + "." + (lo >> 8) + "." + (lo & 0xff);
            }
        }
        return text;
    }

    /** {@code -s}/{@code -d}: always with a prefix length, /32 or /128 for a single address. */
    static String cidr(Cidr cidr) {
        return address(cidr.network()) + "/" + cidr.prefix();
    }

    /**
     * libxt_statistic stores {@code lround(p * 2^31)} as a u32 and prints {@code %.11f} of
     * value / 2^31. Both steps are exact in BigDecimal: strtod and Double.parseDouble round the same
     * way, scaling a double by 2^31 is exact, and glibc's printf rounds the exact binary value half
     * to even.
     */
    static String probability(String written) {
        BigDecimal exact = new BigDecimal(Double.parseDouble(written));
        long stored =
                exact.multiply(TWO_POW_31).setScale(0, RoundingMode.HALF_UP).longValueExact();
        return BigDecimal.valueOf(stored)
                .divide(TWO_POW_31)
                .setScale(11, RoundingMode.HALF_EVEN)
                .toPlainString();
    }

    /**
     * xtables_save_string: bare when every character is a letter, digit, '_' or '-', else in double
     * quotes with a backslash before each single quote (the grammar admits no double quote or
     * backslash, the other two characters it escapes).
     */
    static String string(String value) {
        if (!value.isEmpty() && value.chars().allMatch(c -> NO_QUOTE_CHARS.indexOf(c) >= 0)) {
            return value;
        }
        return "\"" + value.replace("'", "\\'") + "\"";
    }

    /** Marks and masks: {@code 0x%x}. */
    static String hex(long value) {
        return "0x" + Long.toHexString(value);
    }
}
