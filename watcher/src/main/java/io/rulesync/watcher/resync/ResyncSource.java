package io.rulesync.watcher.resync;

import io.rulesync.model.event.ResyncRequest;
import java.util.function.Consumer;

/**
 * Where the compiler's requests for a resync come from: the resync topic ({@link KafkaResyncRequests})
 * in production, none in tests that do not need them.
 */
public interface ResyncSource {
    /** Hears no requests. */
    ResyncSource NONE = handler -> new Listening() {
        @Override
        public boolean ready() {
            return true;
        }

        @Override
        public void close() {}
    };

    /** Starts delivering requests to {@code handler} (from a thread of its own) until closed. */
    Listening start(Consumer<ResyncRequest> handler);

    /** A running source. */
    interface Listening extends AutoCloseable {
        /** True once every request from now on is heard. */
        boolean ready();

        @Override
        void close();
    }
}
