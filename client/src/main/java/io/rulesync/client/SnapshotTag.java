package io.rulesync.client;

import io.rulesync.model.rules.Lineage;

/**
 * A node's snapshot's entity tag, as the api sends it ({@code ETag}) and an agent sends it back ({@code If-None-Match}):
 * {@code "v<version>-<lineage>"}, or {@code "v<version>"} for a version whose lineage is not known. The URL names the
 * cluster and node, and a stored version never changes; the lineage is in the tag because after a restore from a backup
 * the number may come again for other rules.
 */
public record SnapshotTag(long version, String lineage) {

    /** The tag as the header carries it, quotes included. */
    public String header() {
        return "\"v" + version + (lineage.isEmpty() ? "" : "-" + lineage) + "\"";
    }

    /**
     * Reads a tag the api sent.
     *
     * @throws IllegalArgumentException when {@code etag} is not of this form
     */
    public static SnapshotTag parse(String etag) {
        if (etag == null || etag.length() < 4 || !etag.startsWith("\"v") || !etag.endsWith("\"")) {
            throw new IllegalArgumentException("ETag " + etag + " is not \"v<version>[-<lineage>]\"");
        }
        String inner = etag.substring(2, etag.length() - 1);
        int dash = inner.indexOf('-');
        try {
            return new SnapshotTag(
                    Long.parseLong(dash < 0 ? inner : inner.substring(0, dash)),
                    Lineage.check("lineage", dash < 0 ? "" : inner.substring(dash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("ETag " + etag + " is not \"v<version>[-<lineage>]\"");
        }
    }
}
