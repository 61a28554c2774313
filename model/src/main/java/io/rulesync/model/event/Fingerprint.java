package io.rulesync.model.event;

import io.rulesync.model.cluster.ClusterObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * An order-independent fingerprint of a set of facts: how many there are and the sum (mod 2^128)
 * of their SHA-256 prefixes. A sum, not a hash of a sorted list, so that either side can keep it up
 * to date one object at a time and two sides that hold the same objects agree whatever order they
 * learnt them in. Two different sets collide with probability about 2^-128 per comparison, which
 * is plenty for telling "the compiler missed something" from "it did not".
 *
 * <p>An object's hash covers its key and its wire form ({@link ManifestEncoder}), so it changes
 * exactly when what the compiler would fold changes.
 */
public record Fingerprint(long count, long high, long low) {
    public static final Fingerprint EMPTY = new Fingerprint(0, 0, 0);

    public Fingerprint {
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " is negative");
        }
    }

    /** The fingerprint of one object. */
    public static Fingerprint of(ClusterObject o) {
        ObjectRef ref = ObjectRef.of(o);
        return ofText(ref.kind().apiName() + '\0' + ref.key() + '\0' + Json.write(ManifestEncoder.encode(o)));
    }

    /** The fingerprint of a cluster's settings. */
    public static Fingerprint of(ClusterSettings settings) {
        return ofText("settings\0" + Json.write(EventCodec.settingsMap(settings)));
    }

    /** The fingerprint of one source's problems (not of when they were reported: both sides must agree on it). */
    public static Fingerprint of(ClusterEvent.ProblemsReported report) {
        return ofText("problems\0" + report.source() + '\0' + Json.write(EventCodec.problemMaps(report.problems())));
    }

    private static Fingerprint ofText(String text) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            ByteBuffer b = ByteBuffer.wrap(h);
            return new Fingerprint(1, b.getLong(), b.getLong());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** The fingerprint of the union of two disjoint sets. */
    public Fingerprint plus(Fingerprint o) {
        long lo = low + o.low;
        long carry = Long.compareUnsigned(lo, low) < 0 ? 1 : 0;
        return new Fingerprint(count + o.count, high + o.high + carry, lo);
    }

    /** The fingerprint of this set without {@code o}, which it contains. */
    public Fingerprint minus(Fingerprint o) {
        long lo = low - o.low;
        long borrow = Long.compareUnsigned(low, o.low) < 0 ? 1 : 0;
        return new Fingerprint(count - o.count, high - o.high - borrow, lo);
    }

    /** The 128-bit sum as 32 hex digits. */
    public String sum() {
        return HexFormat.of().toHexDigits(high) + HexFormat.of().toHexDigits(low);
    }

    /** Reads {@link #sum()} back. */
    public static Fingerprint parse(long count, String sum) {
        if (sum == null || !sum.matches("[0-9a-f]{32}")) {
            throw new IllegalArgumentException("sum: expected 32 lower-case hex digits");
        }
        return new Fingerprint(
                count, HexFormat.fromHexDigitsToLong(sum, 0, 16), HexFormat.fromHexDigitsToLong(sum, 16, 32));
    }

    @Override
    public String toString() {
        return count + "/" + sum();
    }
}
