package io.rulesync.model.rules;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Which history a version belongs to: a hash chained over the version's number, what it changed, and its parent's
 * lineage, as a Git commit id names a commit and everything before it. Two databases that hold the same version with
 * the same lineage hold the same rules up to it; after a restore from a backup (or a failover to a replica that lost
 * commits) the numbers that come again carry another lineage, unless they changed exactly the same. A node that runs
 * version N of one lineage must never apply a delta that follows version N of another: it loads a snapshot instead.
 *
 * <p>{@link #UNKNOWN} ("") is what a message or state written before lineages existed carries: it is taken to agree,
 * since nothing can be compared.
 */
public final class Lineage {
    public static final String UNKNOWN = "";
    /** 128 bits of SHA-256, in hex. */
    private static final Pattern FORM = Pattern.compile("[0-9a-f]{32}");

    private Lineage() {}

    /** The lineage of version {@code seq}, which made {@code diff} on top of a version of lineage {@code parent}. */
    public static String next(String parent, long seq, RulesDiff diff) {
        // Sorted, so that the same change hashes the same whatever order the compiler listed it in.
        List<String> lines =
                new ArrayList<>(diff.fragments().size() + diff.nodes().size());
        for (RulesDiff.FragmentChange c : diff.fragments()) {
            FragmentKey k = c.key();
            lines.add("f " + k.family().id() + " " + k.unit().id() + " "
                    + k.variant().id() + " "
                    + (c.after() == null ? "-" : c.after().hash()));
        }
        for (RulesDiff.NodeChange n : diff.nodes()) {
            lines.add("n " + n.node() + " " + (n.zoneAfter() == null ? "-" : "=" + n.zoneAfter()));
        }
        Collections.sort(lines);
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        sha.update((parent + "\n" + seq + "\n").getBytes(StandardCharsets.UTF_8));
        for (String line : lines) {
            sha.update((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        byte[] digest = sha.digest();
        return HexFormat.of().formatHex(digest, 0, 16);
    }

    /** Whether a node that runs a version of lineage {@code held} may take what follows a version of {@code follows}. */
    public static boolean agree(String held, String follows) {
        return held.isEmpty() || follows.isEmpty() || held.equals(follows);
    }

    /**
     * Checks a lineage that came from outside: {@link #UNKNOWN} or 32 lowercase hex digits.
     *
     * @throws IllegalArgumentException naming {@code field}
     */
    public static String check(String field, String lineage) {
        if (lineage == null || lineage.isEmpty()) {
            return UNKNOWN;
        }
        if (!FORM.matcher(lineage).matches()) {
            throw new IllegalArgumentException(
                    field + ": '" + abbreviate(lineage) + "' is not a lineage (32 lowercase hex digits)");
        }
        return lineage;
    }

    /** A lineage as people read it: its first 12 digits, or "unknown". */
    public static String shortForm(String lineage) {
        return lineage.isEmpty() ? "unknown" : lineage.substring(0, Math.min(12, lineage.length()));
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
