package io.rulesync.model.manifest;

import io.rulesync.model.cluster.KubernetesNames;
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

    /** {@code source: object: field: message}, leaving out the parts that are empty. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (String part : new String[] {source, object, field}) {
            if (!part.isEmpty()) {
                sb.append(part).append(": ");
            }
        }
        return sb.append(message).toString();
    }
}
