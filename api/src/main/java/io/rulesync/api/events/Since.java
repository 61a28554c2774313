package io.rulesync.api.events;

import io.rulesync.api.params.BadValue;
import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** {@code ?since=}: an RFC 3339 instant, in RFC 3339's years. */
@Schema(type = "string", format = "date-time", example = "2026-11-29T12:00:00Z")
public record Since(Instant at, String text) {
    /** RFC 3339's range, well inside PostgreSQL's (4713 BC to 294276 AD), which would refuse the query instead. */
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");

    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999999Z");

    public static Since parse(String s) {
        Instant at;
        try {
            at = Instant.parse(s);
        } catch (DateTimeParseException e) {
            throw new BadValue("'" + KubernetesNames.printable(s) + "' is not an instant like 2026-11-29T12:00:00Z");
        }
        if (at.isBefore(EARLIEST) || at.isAfter(LATEST)) {
            throw new BadValue("'" + KubernetesNames.printable(s) + "' is outside the years 0000-9999 (RFC 3339's)");
        }
        return new Since(at, s);
    }

    /** As the request said it (the next page's link repeats it). */
    @Override
    public String toString() {
        return text;
    }
}
