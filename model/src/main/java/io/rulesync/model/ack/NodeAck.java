package io.rulesync.model.ack;

import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.event.Json;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;

/**
 * What a node agent reports after each apply (like an xDS ACK/NACK): the version it now runs, or
 * the version it refused and why (it keeps running {@code running}).
 *
 * @param version    the version this ack is about (applied, or refused)
 * @param running    the version the node's kernel holds after this apply (= version when APPLIED)
 * @param error      null when APPLIED
 * @param durationMs time spent applying, validation included
 * @param ruleCount  rules the node holds for this version (both families)
 * @param mode       how rules are programmed, e.g. {@code iptables} or {@code dry-run}
 */
public record NodeAck(
        String cluster,
        String node,
        long version,
        long running,
        Status status,
        String error,
        long durationMs,
        int ruleCount,
        String mode,
        Instant at) {
    public static final int FORMAT = 1;
    /** Characters of {@code error} an ack may carry: a tool's reason, bounded already by the agent, fits many times over. */
    public static final int MAX_ERROR = 4_096;
    /** Characters of {@code mode}: a mode and its fallback reason. */
    public static final int MAX_MODE = 1_024;

    public enum Status {
        APPLIED,
        FAILED
    }

    public NodeAck {
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(at, "at");
        String bad = KubernetesNames.checkSubdomain(node);
        if (bad != null) {
            throw new IllegalArgumentException("node: " + bad);
        }
        if ((status == Status.FAILED) != (error != null)) {
            throw new IllegalArgumentException("error: a FAILED ack carries an error, an APPLIED one does not");
        }
        // Stored and shown to every operator: a node may not fill the database or a page with one ack.
        if (error != null && error.length() > MAX_ERROR) {
            throw new IllegalArgumentException("error: " + error.length() + " characters, at most " + MAX_ERROR);
        }
        if (mode.length() > MAX_MODE) {
            throw new IllegalArgumentException("mode: " + mode.length() + " characters, at most " + MAX_MODE);
        }
        if (version < 0 || running < 0 || durationMs < 0 || ruleCount < 0) {
            throw new IllegalArgumentException("version, running, durationMs and ruleCount must not be negative");
        }
    }

    /** {@code error} cut to {@link #MAX_ERROR} characters: what an agent reports when a tool said more. */
    public static String bounded(String error) {
        return cut(error, MAX_ERROR);
    }

    /** {@code mode} cut to {@link #MAX_MODE} characters (a fallback's reason is part of it). */
    public static String boundedMode(String mode) {
        return cut(mode, MAX_MODE);
    }

    private static String cut(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    public String toJson() {
        return Json.generate(this::write);
    }

    /**
     * Writes this ack as one JSON object to {@code g}, field by field: an agent writes one per version, and the same through
     * a map cost it as much again in serializer lookups.
     */
    public void write(JsonGenerator g) {
        g.writeStartObject();
        g.writeNumberProperty("v", FORMAT);
        g.writeStringProperty("cluster", cluster);
        g.writeStringProperty("node", node);
        g.writeNumberProperty("version", version);
        g.writeNumberProperty("running", running);
        g.writeStringProperty("status", status.name());
        if (error != null) {
            g.writeStringProperty("error", error);
        }
        g.writeNumberProperty("durationMs", durationMs);
        g.writeNumberProperty("ruleCount", ruleCount);
        g.writeStringProperty("mode", mode);
        g.writeStringProperty("at", at.toString());
        g.writeEndObject();
    }

    /** Reads {@link #toJson}; throws {@link IllegalArgumentException} naming the bad field. */
    public static NodeAck fromJson(String json) {
        JsonNode m;
        try {
            m = Json.MAPPER.readTree(json);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("ack is not JSON: " + e.getOriginalMessage(), e);
        }
        return fromJson(m);
    }

    /** Reads {@link #toJson} already parsed (an element of a list of acks). */
    public static NodeAck fromJson(JsonNode m) {
        if (m == null || !m.isObject()) {
            throw new IllegalArgumentException("ack is not a JSON object");
        }
        JsonNode v = m.get("v");
        if (v == null || !v.isInt() || v.intValue() != FORMAT) {
            throw new IllegalArgumentException("v: ack format " + v + " is not supported");
        }
        JsonNode s = m.get("status");
        String statusText = s != null && s.isString() ? s.stringValue() : String.valueOf(s);
        Status status = switch (statusText) {
            case "APPLIED" -> Status.APPLIED;
            case "FAILED" -> Status.FAILED;
            default -> throw new IllegalArgumentException("status: '" + statusText + "' is not APPLIED or FAILED");
        };
        String at = text(m, "at");
        try {
            return new NodeAck(
                    text(m, "cluster"),
                    text(m, "node"),
                    whole(m, "version"),
                    whole(m, "running"),
                    status,
                    text(m, "error"),
                    whole(m, "durationMs"),
                    count(m, "ruleCount"),
                    text(m, "mode"),
                    instant(required(at, "at")));
        } catch (DateTimeParseException e) {
            throw wrongType("at: " + e.getMessage());
        }
    }

    /**
     * {@link Instant#parse}, with a quick way for what agents send: {@link Instant#toString}'s form (UTC, {@code Z}, 0-9
     * digits of fraction). The api reads one per node and version, and the formatter's general parse was a third of reading
     * an ack; anything in another form goes to {@link Instant#parse} and means what it means there.
     */
    static Instant instant(String s) {
        int n = s.length();
        if (n < 20
                || n > 30
                || s.charAt(4) != '-'
                || s.charAt(7) != '-'
                || s.charAt(10) != 'T'
                || s.charAt(13) != ':'
                || s.charAt(16) != ':'
                || s.charAt(n - 1) != 'Z'
                || (n > 20 && (s.charAt(19) != '.' || n == 21))) {
            return Instant.parse(s);
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 7);
        int day = digits(s, 8, 10);
        int hour = digits(s, 11, 13);
        int minute = digits(s, 14, 16);
        int second = digits(s, 17, 19);
        int fraction = n > 20 ? digits(s, 20, n - 1) : 0;
        if (year < 0
                || month < 1
                || month > 12
                || day < 1
                || day > 31
                || hour < 0
                || hour > 23
                || minute < 0
                || minute > 59
                || second < 0
                || second > 59
                || fraction < 0) {
            return Instant.parse(s); // a leap second, or not digits: the formatter decides
        }
        for (int i = n - 1; i < 29; i++) {
            fraction *= 10; // "12" is 120,000,000 ns
        }
        long days;
        try {
            days = LocalDate.of(year, month, day).toEpochDay();
        } catch (DateTimeException e) {
            return Instant.parse(s); // the 31st of a month of 30 days: refused there, as it says
        }
        return Instant.ofEpochSecond(days * 86_400 + hour * 3_600L + minute * 60L + second, fraction);
    }

    /** The decimal number in {@code s} from {@code from} to {@code to}; -1 if a character is not a digit. */
    private static int digits(String s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** A string field, or null when absent (the constructor says which may not be). */
    private static String text(JsonNode m, String field) {
        JsonNode n = m.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isString()) {
            throw wrongType(field);
        }
        return n.stringValue();
    }

    private static long whole(JsonNode m, String field) {
        JsonNode n = m.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
            throw wrongType(field);
        }
        return n.longValue();
    }

    private static int count(JsonNode m, String field) {
        JsonNode n = m.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt()) {
            throw wrongType(field);
        }
        return n.intValue();
    }

    private static String required(String value, String field) {
        if (value == null) {
            throw wrongType(field);
        }
        return value;
    }

    private static IllegalArgumentException wrongType(String what) {
        return new IllegalArgumentException("ack is missing a field or has one of the wrong type: " + what);
    }
}
