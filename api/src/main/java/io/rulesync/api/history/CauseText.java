package io.rulesync.api.history;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A version's cause (the events or the operator action that made it) as one line for people, rendered once here for
 * the command line and the dashboard: operator actions first, then the objects changed, then anything else the cause
 * holds (settings, a resync), without the bookkeeping of offsets.
 */
final class CauseText {
    private static final Set<String> BOOKKEEPING = Set.of(
            "events", "topic", "partition", "firstOffset", "lastOffset", "objects", "moreObjects", "operatorActions");

    private CauseText() {}

    static String summary(JsonNode cause) {
        if (cause == null || !cause.isObject()) {
            return "-";
        }
        List<String> parts = new ArrayList<>();
        for (JsonNode a : cause.path("operatorActions")) {
            String what = a.path("action").asString("");
            parts.add(("rollback".equals(what)
                            ? "rollback to v" + a.path("toVersion").asLong()
                            : what) + " by " + a.path("actor").asString("") + ": "
                    + a.path("reason").asString(""));
        }
        List<String> objects = new ArrayList<>();
        cause.path("objects").forEach(o -> objects.add(o.asString("")));
        if (!objects.isEmpty()) {
            parts.add(String.join(", ", objects)
                    + (cause.has("moreObjects")
                            ? " (+" + cause.path("moreObjects").asInt() + " more)"
                            : ""));
        }
        for (String key : cause.propertyNames()) {
            if (!BOOKKEEPING.contains(key)) {
                parts.add(key + ": "
                        + (cause.get(key).isString()
                                ? cause.get(key).asString()
                                : cause.get(key).toString()));
            }
        }
        return parts.isEmpty() ? "-" : String.join("; ", parts);
    }
}
