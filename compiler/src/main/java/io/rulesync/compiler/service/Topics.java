package io.rulesync.compiler.service;

import java.util.Objects;

/** The Kafka topics the compiler reads and writes. */
public record Topics(String events, String deltas, String deadLetters) {
    public static final Topics DEFAULT =
            new Topics("rulesync.cluster-events", "rulesync.rule-deltas", "rulesync.cluster-events.dlt");

    public Topics {
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(deltas, "deltas");
        Objects.requireNonNull(deadLetters, "deadLetters");
    }
}
