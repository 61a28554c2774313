package io.rulesync.model.manifest;

import io.rulesync.model.cluster.KubernetesNames;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one value of a parsed object and knows its path ({@code spec.ports[0].port}), so that every
 * type or range error names the exact field. Problems are collected, not thrown, so one pass reports
 * everything wrong with an object.
 */
final class FieldReader {
    private final String path;
    private final Object value;
    private final Problems problems;

    private FieldReader(String path, Object value, Problems problems) {
        this.path = path;
        this.value = value;
        this.problems = problems;
    }

    static FieldReader root(Map<String, Object> content, Problems problems) {
        return new FieldReader("", content, problems);
    }

    String path() {
        return path;
    }

    boolean present() {
        return value != null;
    }

    /** A child field; absent (not a problem) when this value is absent. */
    FieldReader field(String name) {
        String childPath = path.isEmpty() ? name : path + "." + name;
        if (value == null) {
            return new FieldReader(childPath, null, problems);
        }
        if (!(value instanceof Map<?, ?> map)) {
            fail("expected a mapping, found " + describe(value));
            return new FieldReader(childPath, null, problems);
        }
        return new FieldReader(childPath, map.get(name), problems);
    }

    /** The elements of a list; empty when absent. */
    List<FieldReader> list() {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> items)) {
            fail("expected a list, found " + describe(value));
            return List.of();
        }
        List<FieldReader> out = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            out.add(new FieldReader(path + "[" + i + "]", items.get(i), problems));
        }
        return out;
    }

    /** The value as a string, or {@code defaultValue} when absent (or of the wrong type, which is reported). */
    String string(String defaultValue) {
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof String s)) {
            fail("expected a string, found " + describe(value));
            return defaultValue;
        }
        return s;
    }

    /** A string that must be present; reports and returns null when it is not. */
    String requiredString() {
        if (value == null) {
            fail("is required");
            return null;
        }
        return string(null);
    }

    /** The value as an integer, or {@code defaultValue} when absent or not an integer (reported). */
    long integer(long defaultValue) {
        Long v = integerOrNull();
        return v == null ? defaultValue : v;
    }

    /** The value as an integer; null when absent or not an integer (the latter is reported). */
    Long integerOrNull() {
        if (value == null) {
            return null;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof BigInteger) {
            fail(value + " is out of range");
            return null;
        }
        fail("expected an integer, found " + describe(value));
        return null;
    }

    /** The value as a boolean; null when absent. */
    Boolean bool() {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Boolean b)) {
            fail("expected true or false, found " + describe(value));
            return null;
        }
        return b;
    }

    /** A map of strings to strings (labels, annotations); empty when absent. */
    Map<String, String> stringMap() {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?> map)) {
            fail("expected a mapping, found " + describe(value));
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            Object v = e.getValue();
            if (v instanceof String s) {
                out.put(String.valueOf(e.getKey()), s);
            } else {
                new FieldReader(path + "." + e.getKey(), v, problems).fail("expected a string, found " + describe(v));
            }
        }
        return out;
    }

    /**
     * The entries of a mapping with string keys and values, without reporting anything: for checks
     * that run after {@link #stringMap()} has reported the values of other types.
     */
    Map<String, String> stringEntries() {
        Map<String, String> out = new LinkedHashMap<>();
        if (value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (e.getValue() instanceof String v) {
                    out.put(String.valueOf(e.getKey()), v);
                }
            }
        }
        return out;
    }

    /** Whether the value is a mapping (nothing reported: {@link #field} does that). */
    boolean isMapping() {
        return value instanceof Map<?, ?>;
    }

    /** The number of elements when the value is a list, else 0 (nothing reported: {@link #list()} does that). */
    int size() {
        return value instanceof List<?> items ? items.size() : 0;
    }

    /** A child for a problem about one key of a mapping, its path quoting control characters. */
    FieldReader key(String key) {
        return new FieldReader(path + "." + KubernetesNames.printable(key), null, problems);
    }

    void fail(String message) {
        problems.add(path, message);
    }

    static String describe(Object v) {
        return Problem.describe(v);
    }

    /** The problems of one object, tagged with its source and, once known, its identity. */
    static final class Problems {
        private final String source;
        private String object = "";
        private final List<Problem> list = new ArrayList<>();

        Problems(String source) {
            this.source = source;
        }

        void identify(String object) {
            this.object = object;
        }

        void add(String field, String message) {
            list.add(new Problem(source, object, field, message));
        }

        boolean isEmpty() {
            return list.isEmpty();
        }

        List<Problem> toList() {
            // Problems found before the object was identified get the identity too.
            List<Problem> out = new ArrayList<>(list.size());
            for (Problem p : list) {
                out.add(p.object().isEmpty() ? new Problem(p.source(), object, p.field(), p.message()) : p);
            }
            return out;
        }
    }
}
