package io.rulesync.model.topic;

import java.util.Objects;

/**
 * The Kafka topics that connect the roles. Every one is keyed by cluster id, so one cluster's
 * messages stay in order on one partition.
 *
 * @param events      watcher → compiler: cluster change events
 * @param deltas      compiler → agents: rule deltas between consecutive versions
 * @param deadLetters events the compiler refused, with the reason
 * @param resyncs     compiler → watchers: requests to publish a cluster's whole state again
 */
public record Topics(String events, String deltas, String deadLetters, String resyncs) {
    public static final Topics DEFAULT =
            new Topics("rulesync.cluster-events", "rulesync.rule-deltas", "rulesync.cluster-events.dlt");

    public Topics {
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(deltas, "deltas");
        Objects.requireNonNull(deadLetters, "deadLetters");
        Objects.requireNonNull(resyncs, "resyncs");
    }

    /** The resync topic named after the events topic it serves: {@code EVENTS.resync}. */
    public Topics(String events, String deltas, String deadLetters) {
        this(events, deltas, deadLetters, resyncsOf(events));
    }

    /** The resync topic that goes with an events topic. */
    public static String resyncsOf(String events) {
        return events + ".resync";
    }
}
