package io.rulesync.model.event;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * The compiler asks the watcher of {@code cluster} to publish the cluster's whole state again,
 * because it cannot know that it saw every event: the events log was replaced or lost records it
 * had not read, or the watcher's {@link ClusterEvent.StateDigest} disagreed with what the compiler
 * folded. Events are whole object states, so a full republish makes the cluster right again.
 * Travels on the resync topic, keyed by cluster.
 */
public record ResyncRequest(String cluster, String reason, Instant requestedAt) {
    /** Longest reason kept, in characters. */
    public static final int MAX_REASON = 500;

    public ResyncRequest {
        ClusterEvent.requireCluster(cluster);
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(requestedAt, "requestedAt");
        reason = reason.length() > MAX_REASON ? reason.substring(0, MAX_REASON - 1) + "…" : reason;
    }

    public String encode() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cluster", cluster);
        m.put("reason", reason);
        m.put("requestedAt", requestedAt.toString());
        return Json.write(m);
    }

    /** Reads a request; throws {@link IllegalArgumentException} naming what is wrong with it. */
    public static ResyncRequest decode(String json) {
        if (json == null || json.length() > 4 * MAX_REASON + 1024) {
            throw new IllegalArgumentException(
                    "not a resync request: " + (json == null ? "empty" : json.length() + " characters"));
        }
        try {
            JsonNode m = Json.MAPPER.readTree(json);
            if (m == null || !m.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            JsonNode cluster = m.get("cluster");
            JsonNode reason = m.get("reason");
            JsonNode at = m.get("requestedAt");
            if (cluster == null
                    || !cluster.isString()
                    || reason == null
                    || !reason.isString()
                    || at == null
                    || !at.isString()) {
                throw new IllegalArgumentException("cluster, reason and requestedAt must be strings");
            }
            return new ResyncRequest(cluster.stringValue(), reason.stringValue(), Instant.parse(at.stringValue()));
        } catch (JacksonException | DateTimeParseException e) {
            throw new IllegalArgumentException("not a resync request: "
                    + e.getMessage().replaceAll("\\s+", " ").strip());
        }
    }
}
