package io.rulesync.agent.feed;

import java.util.Locale;

/**
 * How an agent reaches the control plane for deltas (snapshots and acks always go through the api, acks with the node's
 * own credential).
 * {@link #STREAM}: one long-lived stream to the api that carries versions down and acks up ({@link StreamFeed}).
 * {@link #API}: a watch and POSTs to the api's REST endpoints. Both with a token bound to the node's cluster: the node
 * needs no Kafka credentials and reads nothing of another cluster. {@link #KAFKA}: the deltas topic, whose partitions
 * clusters share; for agents inside the control plane's own trust boundary only.
 */
public enum Transport {
    STREAM,
    API,
    KAFKA;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Transport parse(String s) {
        for (Transport t : values()) {
            if (t.id().equals(s)) {
                return t;
            }
        }
        throw new IllegalArgumentException("'" + s + "' is not stream, api or kafka");
    }
}
