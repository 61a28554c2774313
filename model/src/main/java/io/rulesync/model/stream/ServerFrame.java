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
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * What the api writes to a node's stream: one message each, a line of JSON saying what it is, then, for deltas, the
 * versions' deltas as the api's watch sends them (one JSON per line, {@code RulesDelta}). A frame of deltas is made once
 * for every node waiting on the same versions, and the same bytes go to each of their streams.
 *
 * <p>The header carries the body's length and SHA-256, so a node can tell it received the versions' bytes exactly as
 * they were made, before it parses any rule. A node that says it takes deflate gets the body deflated, made once too: the
 * deltas of an endpoint change are a Service's whole rules, text that shrinks several times.
 */
public sealed interface ServerFrame {
    int FORMAT = 1;
    /** The one compression a frame's body may have (zlib's deflate), for nodes that say they take it. */
    String DEFLATE = "deflate";
    /** The most a deflated body may inflate to: a frame's 100 deltas of a large cluster, with room. */
    int MAX_INFLATED = 256 * 1024 * 1024;

    /**
     * The versions after {@code after} up to {@code upTo}, each a delta from the one before; {@code head} is the cluster's
     * newest. {@code baseLineage} is the lineage of {@code after}, {@code lineage} that of {@code upTo} ({@link Lineage#UNKNOWN}
     * from an api that does not say). A node that does not run {@code after} of {@code baseLineage} cannot apply them.
     *
     * <p>{@code body} is the deltas as they were sent: the lines themselves, or those lines deflated ({@code inflated} is
     * then their length, else -1). {@link #ndjson} gives the lines in either case.
     */
    record Deltas(long head, long after, long upTo, String baseLineage, String lineage, byte[] body, int inflated)
            implements ServerFrame {
        /** The deltas' lines, one JSON per line, UTF-8, inflated if they were sent deflated (anew on each call: read them once). */
        public byte[] ndjson() {
            return inflated < 0 ? body : inflate(body, inflated, upTo);
        }

        /** The deltas' lines, as text. */
        public String text() {
            return new String(ndjson(), StandardCharsets.UTF_8);
        }

        /** Whether the body was sent deflated. */
        public boolean deflated() {
            return inflated >= 0;
        }
    }

    /** The node must load a snapshot (it fell too far behind, or the next delta is gone), then resume after its version. */
    record Snapshot(long head, String why) implements ServerFrame {}

    /**
     * A frame of deltas, whose header names its versions and their lineages, its body's length and SHA-256: a node can
     * tell whether the frame follows what it runs before it parses a rule. {@code deflate}: the body is {@code ndjson}
     * deflated (zlib), for nodes that said they take it; length and digest are then those of the deflated bytes, the
     * ones that travel.
     */
    static byte[] deltas(
            long head, long after, long upTo, String baseLineage, String lineage, byte[] ndjson, boolean deflate) {
        byte[] body = deflate ? deflate(ndjson) : ndjson;
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("v", FORMAT);
        h.put("type", "deltas");
        h.put("head", head);
        h.put("after", after);
        h.put("upTo", upTo);
        h.put("baseLineage", baseLineage);
        h.put("lineage", lineage);
        if (deflate) {
            h.put("encoding", DEFLATE);
            h.put("inflated", ndjson.length);
        }
        h.put("bytes", body.length);
        h.put("sha256", HexFormat.of().formatHex(sha256(body, 0, body.length)));
        byte[] header = (Json.write(h) + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] frame = Arrays.copyOf(header, header.length + body.length);
        System.arraycopy(body, 0, frame, header.length, body.length);
        return frame;
    }

    /**
     * Fastest compression: ~150 MB/s here (bench/frame-size), so a large frame (100 deltas of a large cluster) is quick too;
     * the rules' text still comes out 3-4 times smaller.
     */
    private static byte[] deflate(byte[] b) {
        Deflater d = new Deflater(Deflater.BEST_SPEED);
        try {
            d.setInput(b);
            d.finish();
            byte[] out = new byte[b.length + (b.length >> 10) + 64]; // zlib's bound for data that does not compress
            int n = 0;
            while (!d.finished()) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, out.length * 2);
                }
                n += d.deflate(out, n, out.length - n);
            }
            return Arrays.copyOf(out, n);
        } finally {
            d.end();
        }
    }

    /** Inflates exactly {@code length} bytes, refusing a body that gives more or fewer (the header said how many). */
    private static byte[] inflate(byte[] b, int length, long upTo) {
        Inflater i = new Inflater();
        try {
            i.setInput(b);
            byte[] out = new byte[length];
            int n = 0;
            while (n < length && !i.finished()) {
                int got = i.inflate(out, n, length - n);
                if (got == 0 && (i.needsInput() || i.needsDictionary())) {
                    break;
                }
                n += got;
            }
            if (n != length || !i.finished()) {
                throw new IllegalArgumentException("deltas to " + upTo + ": the deflated body does not inflate to the "
                        + length + " bytes its header says");
            }
            return out;
        } catch (DataFormatException e) {
            throw new IllegalArgumentException(
                    "deltas to " + upTo + ": the deflated body is not deflate data: " + e.getMessage());
        } finally {
            i.end();
        }
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
                    throw new IllegalArgumentException(
                            "deltas to " + upTo + ": " + length + " bytes, the header says " + h.get("bytes"));
                }
                String sum = HexFormat.of().formatHex(sha256(frame, start, length));
                if (!sum.equals(h.path("sha256").asString(""))) {
                    throw new IllegalArgumentException(
                            "deltas to " + upTo + ": SHA-256 " + sum + ", the header says " + h.get("sha256"));
                }
                int inflated = -1;
                String encoding = h.path("encoding").asString("identity");
                if (encoding.equals(DEFLATE)) {
                    long n = whole(h, "inflated");
                    if (n > MAX_INFLATED) {
                        throw new IllegalArgumentException("deltas to " + upTo + ": " + n
                                + " bytes inflated, more than the " + MAX_INFLATED + " a node takes");
                    }
                    inflated = (int) n;
                } else if (!encoding.equals("identity")) {
                    throw new IllegalArgumentException(
                            "deltas to " + upTo + ": encoding '" + encoding + "' is not deflate");
                }
                return new Deltas(
                        head,
                        after,
                        upTo,
                        Lineage.check(
                                "frame header: baseLineage",
                                h.path("baseLineage").asString("")),
                        Lineage.check("frame header: lineage", h.path("lineage").asString("")),
                        Arrays.copyOfRange(frame, start, frame.length),
                        inflated);
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
