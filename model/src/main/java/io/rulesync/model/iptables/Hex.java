package io.rulesync.model.iptables;

import java.util.regex.Pattern;

/**
 * A 32-bit value written in hex, as marks and masks are: kube-proxy writes {@code 0x00004000} (Go's
 * {@code %#08x}), iptables prints {@code 0x4000}. The digit count is part of the value so that
 * parsing a rule and writing it again gives the same text.
 */
public record Hex(long value, int digits) {
    private static final Pattern TEXT = Pattern.compile("0x[0-9a-f]{1,8}");

    public Hex {
        if (value < 0 || value > 0xffffffffL) {
            throw new IllegalArgumentException(value + " does not fit 32 bits");
        }
        if (digits < 1 || digits > 8 || Long.toHexString(value).length() > digits) {
            throw new IllegalArgumentException(Long.toHexString(value) + " does not fit " + digits + " hex digits");
        }
    }

    /** Parses {@code 0x} and one to eight lower-case hex digits. */
    public static Hex parse(String text) {
        if (text == null || !TEXT.matcher(text).matches()) {
            throw new IllegalArgumentException("not a 32-bit hex value like 0x00004000");
        }
        return new Hex(Long.parseLong(text.substring(2), 16), text.length() - 2);
    }

    /** The text as written: {@code 0x} and {@link #digits} digits. */
    @Override
    public String toString() {
        String hex = Long.toHexString(value);
        return "0x" + "0".repeat(digits - hex.length()) + hex;
    }

    /** As iptables prints it: no leading zeros. */
    String kernelText() {
        return KernelText.hex(value);
    }
}
