package io.rulesync.model.event;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * An event too large for one Kafka message (a sync marker of a cluster of 50,000 objects, an object
 * near the API server's limits) travels as parts: records of type {@code part}, each carrying a slice
 * of the event's JSON text, the event's id (a SHA-256 prefix of that text), its number and the count.
 * The watcher sends a cluster's parts in order in one transaction; the compiler stores each and, at
 * the last, decodes the whole text with {@link EventCodec} like any event. So nothing above the
 * message limit is dropped, and the parts never reach the fold.
 *
 * <pre>{"v":1,"cluster":"prod","type":"part","event":"3f2a...","part":1,"parts":3,"text":"{\"v\":1,...","observedAt":"..."}</pre>
 */
public final class EventParts {
    /** Most parts one event may have: with parts of 900,000 characters, about 90 MB of JSON. */
    public static final int MAX_PARTS = 100;
    /** Most characters of a whole event put back together (the decoder's limit for one message is {@link EventCodec#MAX_BYTES}). */
    public static final int MAX_TOTAL_CHARS = 64 * 1024 * 1024;

    private EventParts() {}

    /** One part as read: which event, which part of how many, and its slice of the text. */
    public record Part(String cluster, String event, int part, int parts, String text, Instant observedAt) {}

    /**
     * {@code json}, an encoded event of {@code cluster}, as messages of at most about {@code maxChars}:
     * itself when it fits, parts otherwise.
     */
    public static List<String> split(String cluster, String json, Instant observedAt, int maxChars) {
        if (json.length() <= maxChars) {
            return List.of(json);
        }
        // Room for the envelope and the escaping of the slice (quotes and backslashes double in the worst case).
        int slice = Math.max(1, (maxChars - 512) / 2);
        int parts = (json.length() + slice - 1) / slice;
        if (parts > MAX_PARTS) {
            throw new IllegalArgumentException("an event of " + json.length() + " characters needs " + parts
                    + " parts of " + slice + " (at most " + MAX_PARTS + ")");
        }
        String id = idOf(json);
        List<String> out = new ArrayList<>(parts);
        for (int i = 0; i < parts; i++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("v", EventCodec.FORMAT);
            m.put("cluster", cluster);
            m.put("type", "part");
            m.put("event", id);
            m.put("part", i + 1);
            m.put("parts", parts);
            m.put("text", json.substring(i * slice, Math.min(json.length(), (i + 1) * slice)));
            m.put("observedAt", observedAt.toString());
            out.add(Json.write(m));
        }
        return out;
    }

    /**
     * The part {@code json} is, when it is one (empty for every other message); throws
     * {@link IllegalArgumentException} naming the field when it claims to be a part and is not a valid one.
     */
    public static Optional<Part> read(String json) {
        if (json == null || !json.contains("\"type\":\"part\"")) {
            return Optional.empty(); // a cheap look first: only messages holding that text are parsed
        }
        JsonNode m;
        try {
            m = Json.MAPPER.readTree(json);
        } catch (JacksonException e) {
            return Optional.empty(); // not JSON at all: the decoder says so
        }
        JsonNode type = m == null || !m.isObject() ? null : m.get("type");
        if (type == null || !type.isString() || !"part".equals(type.stringValue())) {
            return Optional.empty();
        }
        String cluster = text(m, "cluster");
        String event = text(m, "event");
        if (!event.matches("[0-9a-f]{32}")) {
            throw new IllegalArgumentException("event: expected 32 lower-case hex digits");
        }
        int parts = whole(m, "parts");
        int part = whole(m, "part");
        if (parts < 2 || parts > MAX_PARTS) {
            throw new IllegalArgumentException("parts: " + parts + " is out of range (2-" + MAX_PARTS + ")");
        }
        if (part < 1 || part > parts) {
            throw new IllegalArgumentException("part: " + part + " is out of range (1-" + parts + ")");
        }
        Instant at;
        try {
            at = Instant.parse(text(m, "observedAt"));
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException("observedAt: not an instant");
        }
        return Optional.of(new Part(cluster, event, part, parts, text(m, "text"), at));
    }

    /** The whole text of parts 1..n of one event, in order; throws naming what is wrong when they are not. */
    public static String join(List<Part> parts) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("no parts");
        }
        Part first = parts.get(0);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            Part p = parts.get(i);
            if (!p.event().equals(first.event()) || p.parts() != first.parts() || p.part() != i + 1) {
                throw new IllegalArgumentException("part " + p.part() + " of event " + p.event() + " where part "
                        + (i + 1) + " of event " + first.event() + " was expected");
            }
            out.append(p.text());
            if (out.length() > MAX_TOTAL_CHARS) {
                throw new IllegalArgumentException(
                        "event " + first.event() + " exceeds " + MAX_TOTAL_CHARS + " characters");
            }
        }
        if (parts.size() != first.parts()) {
            throw new IllegalArgumentException(
                    "event " + first.event() + " has " + parts.size() + " of " + first.parts() + " parts");
        }
        String whole = out.toString();
        if (!idOf(whole).equals(first.event())) {
            throw new IllegalArgumentException("the parts of event " + first.event()
                    + " do not add up to it (its id is the " + "SHA-256 of the whole text)");
        }
        return whole;
    }

    private static String idOf(String json) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(json.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private static String text(JsonNode m, String field) {
        JsonNode v = m.get(field);
        if (v == null || !v.isString()) {
            throw new IllegalArgumentException(field + ": expected a string");
        }
        return v.stringValue();
    }

    private static int whole(JsonNode m, String field) {
        JsonNode v = m.get(field);
        if (v == null || !v.isInt()) {
            throw new IllegalArgumentException(field + ": expected a whole number");
        }
        return v.intValue();
    }
}
