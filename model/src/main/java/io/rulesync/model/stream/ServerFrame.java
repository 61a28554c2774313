package io.rulesync.model.stream;

import io.rulesync.model.event.Json;
import io.rulesync.model.rules.Lineage;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * What the api writes to a node's stream: one message each, a line of JSON saying what it is, then, for deltas, the
 * versions' deltas as the api's watch sends them (one JSON per line, {@code RulesDelta}). A frame of deltas is made once
 * for every node waiting on the same versions, and the same bytes go to each of their streams.
 *
 * <p>The header carries the body's length and SHA-256, so a node can tell it received the versions' bytes exactly as
 * they were made, before it parses any rule.
 */
public sealed interface ServerFrame {
    int FORMAT = 1;

    /**
     * The versions after {@code after} up to {@code upTo}, each a delta from the one before; {@code head} is the cluster's
     * newest. {@code baseLineage} is the lineage of {@code after}, {@code lineage} that of {@code upTo} ({@link Lineage#UNKNOWN}
     * from an api that does not say). A node that does not run {@code after} of {@code baseLineage} cannot apply them.
     */
    record Deltas(long head, long after, long upTo, String baseLineage, String lineage, byte[] ndjson) implements ServerFrame {
        /** The deltas' lines, as text. */
        public String text() {
            return new String(ndjson, StandardCharsets.UTF_8);
        }
    }

    /** The node must load a snapshot (it fell too far behind, or the next delta is gone), then resume after its version. */
    record Snapshot(long head, String why) implements ServerFrame {
    }

    /**
     * A frame of deltas, whose header names its versions and their lineages, its body's length and SHA-256: a node can
     * tell whether the frame follows what it runs before it parses a rule.
     */
    static byte[] deltas(long head, long after, long upTo, String baseLineage, String lineage, byte[] ndjson) {
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("v", FORMAT);
        h.put("type", "deltas");
        h.put("head", head);
        h.put("after", after);
        h.put("upTo", upTo);
        h.put("baseLineage", baseLineage);
        h.put("lineage", lineage);
        h.put("bytes", ndjson.length);
        h.put("sha256", HexFormat.of().formatHex(sha256(ndjson, 0, ndjson.length)));
        byte[] header = (Json.write(h) + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] frame = Arrays.copyOf(header, header.length + ndjson.length);
        System.arraycopy(ndjson, 0, frame, header.length, ndjson.length);
        return frame;
    }

    static byte[] snapshot(long head, String why) {
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("v", FORMAT);
        h.put("type", "snapshot");
        h.put("head", head);
        h.put("why", why);
        return Json.write(h).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a frame; a body whose length or SHA-256 is not its header's is refused.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    static ServerFrame read(byte[] frame) {
        int nl = 0;
        while (nl < frame.length && frame[nl] != '\n') {
            nl++;
        }
        JsonNode h;
        try {
            h = Json.MAPPER.readTree(new String(frame, 0, nl, StandardCharsets.UTF_8));
        } catch (JacksonException e) {
            throw new IllegalArgumentException("frame header is not JSON: " + e.getOriginalMessage());
        }
        if (h == null || !h.isObject() || h.path("v").asInt(-1) != FORMAT) {
            throw new IllegalArgumentException("frame format " + (h == null ? null : h.get("v")) + " is not supported");
        }
        String type = h.path("type").asString("");
        long head = whole(h, "head");
        switch (type) {
            case "deltas" -> {
                long after = whole(h, "after");
                long upTo = whole(h, "upTo");
                if (upTo <= after) {
                    throw new IllegalArgumentException("deltas after " + after + " up to " + upTo + ": no versions");
                }
                int start = Math.min(nl + 1, frame.length);
                int length = frame.length - start;
                if (whole(h, "bytes") != length) {
                    throw new IllegalArgumentException("deltas to " + upTo + ": " + length + " bytes, the header says " + h.get("bytes"));
                }
                String sum = HexFormat.of().formatHex(sha256(frame, start, length));
                if (!sum.equals(h.path("sha256").asString(""))) {
                    throw new IllegalArgumentException("deltas to " + upTo + ": SHA-256 " + sum + ", the header says " + h.get("sha256"));
                }
                return new Deltas(head, after, upTo, Lineage.check("frame header: baseLineage", h.path("baseLineage").asString("")),
                        Lineage.check("frame header: lineage", h.path("lineage").asString("")), Arrays.copyOfRange(frame, start, frame.length));
            }
            case "snapshot" -> {
                return new Snapshot(head, h.path("why").asString(""));
            }
            default -> throw new IllegalArgumentException("frame type '" + type + "' is not deltas or snapshot");
        }
    }

    private static long whole(JsonNode h, String field) {
        JsonNode n = h.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) {
            throw new IllegalArgumentException("frame header: " + field + " is not a whole number");
        }
        return n.longValue();
    }

    private static byte[] sha256(byte[] b, int offset, int length) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(b, offset, length);
            return sha.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
