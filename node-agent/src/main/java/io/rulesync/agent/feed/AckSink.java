package io.rulesync.agent.feed;

import io.rulesync.model.ack.NodeAck;

/** Where acks go (the api; a list in tests). */
public interface AckSink extends AutoCloseable {
    void publish(NodeAck ack);

    @Override
    default void close() {}
}
