package io.rulesync.model.manifest;

import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.text.Printable;
import java.util.List;
import java.util.Map;

/**
 * One thing wrong with the input, located precisely enough to fix it: where it came from (file and
 * document), which object, which field, and what is wrong.
 *
 * @param source  e.g. {@code shop/services.yaml (document 2)}; empty when not from a file
 * @param object  e.g. {@code Service shop/web}; empty when the object could not be identified
 * @param field   e.g. {@code spec.ports[0].port}; empty for the object as a whole
 */
public record Problem(String source, String object, String field, String message) {
    public Problem {
        source = source == null ? "" : source;
        object = object == null ? "" : object;
        field = field == null ? "" : field;
    }

    /**
     * How a problem names a value found in a file: "the string \"x\"", "the number 42", "a mapping"...
     * Every reader of YAML input (manifests, the fleet file) words it the same way.
     */
    public static String describe(Object v) {
        if (v == null) {
            return "nothing";
        }
        if (v instanceof String s) {
            return "the string \"" + KubernetesNames.printable(s) + "\"";
        }
        if (v instanceof Map) {
            return "a mapping";
        }
        if (v instanceof List) {
            return "a list";
        }
        if (v instanceof Boolean) {
            return "the boolean " + v;
        }
        if (v instanceof Number) {
            return "the number " + v;
        }
        return "a " + v.getClass().getSimpleName();
    }

    /**
     * {@code source: object: field: message}, leaving out the parts that are empty. Every part may hold
     * input (a file name, a key, a value), so control characters are escapes ({@link Printable}): the
     * text is safe on one log line.
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (String part : new String[] {source, object, field}) {
            if (!part.isEmpty()) {
                sb.append(Printable.escape(part)).append(": ");
            }
        }
        return sb.append(Printable.escape(message)).toString();
    }

    /** This problem with every part escaped ({@link Printable}) and cut to at most {@code max} characters. */
    public Problem printable(int max) {
        return new Problem(cut(source, max), cut(object, max), cut(field, max), cut(message, max));
    }

    private static String cut(String s, int max) {
        String p = Printable.escape(s);
        if (p.length() <= max) {
            return p;
        }
        int end = Character.isHighSurrogate(p.charAt(max - 2)) ? max - 2 : max - 1;
        return p.substring(0, end) + "…";
    }
}
