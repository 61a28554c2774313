package io.rulesync.model.cluster;

import io.rulesync.model.text.Printable;
import java.util.regex.Pattern;

/**
 * The name rules the Kubernetes API server enforces, checked again here because names end up inside
 * iptables comments and chain-name hashes: a name that passes these checks contains only
 * {@code [a-z0-9.-]} and cannot inject iptables-restore syntax.
 */
public final class KubernetesNames {
    private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern DNS1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern DNS1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern QUALIFIED_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

    /** The most a label value, or the name part of a label or annotation key, may hold. */
    public static final int MAX_LABEL_LENGTH = 63;

    private KubernetesNames() {}

    /** Namespaces: a DNS-1123 label. Returns null when valid, else the reason. */
    public static String checkNamespace(String s) {
        return check(s, DNS1123_LABEL, 63, "a DNS-1123 label (lower-case letters, digits and '-', at most 63)");
    }

    /** Service names: a DNS-1035 label (must start with a letter). */
    public static String checkServiceName(String s) {
        return check(
                s,
                DNS1035_LABEL,
                63,
                "a DNS-1035 label (starts with a lower-case letter; letters, digits and '-'; at most 63)");
    }

    /** EndpointSlice and Node names: a DNS-1123 subdomain. */
    public static String checkSubdomain(String s) {
        if (s == null || s.isEmpty()) {
            return "must not be empty";
        }
        if (s.length() > 253 || !isSubdomain(s)) {
            return "'" + printable(s)
                    + "' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)";
        }
        return null;
    }

    /**
     * {@code DNS1123_SUBDOMAIN.matcher(s).matches()} without a matcher: a node's snapshot checks a
     * node name per hairpin entry, 100k of them, and the matcher cost more than reading the rest.
     * Labels of {@code [-a-z0-9]}, none empty, none starting or ending with '-'.
     */
    static boolean isSubdomain(String s) {
        int labelStart = 0;
        for (int i = 0; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '.';
            if (c == '.') {
                if (i == labelStart || s.charAt(labelStart) == '-' || s.charAt(i - 1) == '-') {
                    return false;
                }
                labelStart = i + 1;
            } else if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** Port names of Services and EndpointSlices: empty, or a DNS-1123 label. */
    public static String checkPortName(String s) {
        if (s != null && s.isEmpty()) {
            return null;
        }
        return check(s, DNS1123_LABEL, 63, "empty or a DNS-1123 label (lower-case letters, digits and '-')");
    }

    /**
     * Label and annotation keys: a name of at most 63 letters, digits, '-', '_' and '.' (starting and
     * ending with a letter or digit), optionally after a DNS-1123 subdomain prefix and '/'
     * ({@code kubernetes.io/service-name}).
     */
    public static String checkQualifiedName(String key) {
        if (key == null || key.isEmpty()) {
            return "a key must not be empty";
        }
        int slash = key.indexOf('/');
        String name = slash < 0 ? key : key.substring(slash + 1);
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            if (prefix.isEmpty()
                    || prefix.length() > 253
                    || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
                return "the key's prefix '" + printable(prefix) + "' is not a DNS-1123 subdomain"
                        + " (lower-case letters, digits, '-' and '.', at most 253)";
            }
        }
        if (name.length() > MAX_LABEL_LENGTH) {
            return "the key's name is " + name.length() + " characters long, over the limit of " + MAX_LABEL_LENGTH;
        }
        if (!QUALIFIED_NAME.matcher(name).matches()) {
            return "the key's name '" + printable(name) + "' is not a qualified name"
                    + " (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)";
        }
        return null;
    }

    /** Label values: empty, or at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit. */
    public static String checkLabelValue(String value) {
        if (value.length() > MAX_LABEL_LENGTH) {
            return "is " + value.length() + " characters long, over the limit of " + MAX_LABEL_LENGTH
                    + " for a label value";
        }
        if (!value.isEmpty() && !QUALIFIED_NAME.matcher(value).matches()) {
            return "'" + printable(value) + "' is not a label value"
                    + " (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)";
        }
        return null;
    }

    /** Throws {@link IllegalArgumentException} when {@code problem} is not null. */
    static String require(String what, String value, String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(what + ": " + problem);
        }
        return value;
    }

    private static String check(String s, Pattern pattern, int max, String expected) {
        if (s == null || s.isEmpty()) {
            return "must not be empty";
        }
        if (s.length() > max || !pattern.matcher(s).matches()) {
            return "'" + printable(s) + "' is not " + expected;
        }
        return null;
    }

    /**
     * Quotes control characters (as {@link Printable#escape} does) so that an error message shows
     * exactly what was refused, cut to 120 characters.
     */
    public static String printable(String s) {
        return Printable.shown(s);
    }
}
