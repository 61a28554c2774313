package io.rulesync.model.manifest;

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
