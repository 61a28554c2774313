package io.rulesync.api.access;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What a token may do. Each role is a purpose, not a rank: a node agent's token reads snapshots and
 * nothing else, so a token copied off a node cannot read the audit log or roll a cluster back.
 */
public enum Role {
    /** Reads everything: history, rules, diffs, nodes, events, audit, metrics, the OpenAPI document. */
    VIEWER,
    /** A viewer that may also roll back and resume. */
    OPERATOR,
    /** A node agent: reads snapshots only. */
    AGENT;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Role parse(String id) {
        for (Role r : values()) {
            if (r.id().equals(id)) {
                return r;
            }
        }
        throw new IllegalArgumentException("role '" + id + "' is not one of "
                + Arrays.stream(values()).map(Role::id).collect(Collectors.joining(", ")));
    }
}
