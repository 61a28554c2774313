package io.rulesync.model.text;

/**
 * Text that came from outside (file names, object keys, field values, problem messages) made safe to
 * print on one line of a log or a terminal: control characters, line and paragraph separators,
 * bidirectional overrides and lone surrogates are shown as escapes ({@code \x0a}, {@code \u202e}), so
 * input can neither start a forged log line nor reorder what a reader sees. Everything else is kept
 * as it is, so a message still reads naturally.
 */
public final class Printable {
    private Printable() {}

    /** {@code s} with every character that could break or disguise a line escaped; null stays "null". */
    public static String escape(CharSequence s) {
        if (s == null) {
            return "null";
        }
        int i = 0;
        while (i < s.length() && !unsafe(s, i)) {
            i++;
        }
        if (i == s.length()) {
            return s.toString();
        }
        StringBuilder sb = new StringBuilder(s.length() + 16).append(s, 0, i);
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!unsafe(s, i)) {
                sb.append(c);
            } else if (c < 0x100) {
                sb.append(String.format("\\x%02x", (int) c));
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }

    /** Refused input in an error message: escaped, cut to 120 characters, "(none)" for null. */
    public static String shown(String s) {
        if (s == null) {
            return "(none)";
        }
        return s.length() > 120 ? escape(s.substring(0, 120)) + "..." : escape(s);
    }

    /** {@link #shown} in single quotes, so that empty strings and spaces are visible. */
    public static String quoted(String s) {
        return "'" + shown(s) + "'";
    }

    /** Whether {@link #escape} would change {@code s}. */
    public static boolean isPrintable(CharSequence s) {
        for (int i = 0; i < s.length(); i++) {
            if (unsafe(s, i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean unsafe(CharSequence s, int i) {
        char c = s.charAt(i);
        if (Character.isISOControl(c)
                || c == 0x2028
                || c == 0x2029
                || (c >= 0x202a && c <= 0x202e)
                || (c >= 0x2066 && c <= 0x2069)
                || c == 0xfeff) {
            return true;
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
    }
}
