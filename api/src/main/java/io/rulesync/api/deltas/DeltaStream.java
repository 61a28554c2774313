package io.rulesync.api.deltas;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;

/**
 * One agent's watch: each answer of {@link DeltaWaits} is written to the open response as it comes, and the agent is
 * parked again after the last version written, until the response's time is up. So a new version costs a connected
 * agent one write, not an answer, a new request and a new park (the long poll's round trip per version).
 *
 * <p>Anything but deltas ends the stream: the agent asks again, and that request's answer says why (410 to load a
 * snapshot, 503 from a stopping replica, 404 for a cluster gone).
 */
final class DeltaStream {
    private final DeltaWaits waits;
    private final String cluster;
    private final String node;
    private final ResponseBodyEmitter emitter;
    private final AtomicReference<Runnable> forget = new AtomicReference<>(() -> {});
    private volatile boolean closed;

    DeltaStream(DeltaWaits waits, String cluster, String node, ResponseBodyEmitter emitter) {
        this.waits = waits;
        this.cluster = cluster;
        this.node = node;
        this.emitter = emitter;
        emitter.onTimeout(this::end);
        emitter.onCompletion(this::close);
        emitter.onError(e -> close());
    }

    /** Writes what is ready now, then waits for the versions after {@code after}. */
    void start(DeltaWaits.Answer.Deltas first, long after) {
        if (first != null) {
            answered(first);
        } else {
            park(after);
        }
    }

    private void park(long after) {
        forget.set(waits.request(cluster, node, after, this::answered, e -> end()));
        if (closed) {
            forget.get().run(); // closed while parking: nobody would forget this one
        }
    }

    private void answered(DeltaWaits.Answer a) {
        if (closed) {
            return;
        }
        if (!(a instanceof DeltaWaits.Answer.Deltas d)) {
            end();
            return;
        }
        try {
            emitter.send(d.ndjson(), DeltasController.NDJSON);
        } catch (IOException | IllegalStateException e) {
            close(); // the agent went away, or the stream's time ran out meanwhile
            return;
        }
        park(d.upTo());
    }

    /** The stream's time is up, or it cannot go on: the agent asks again. */
    private void end() {
        close();
        try {
            emitter.complete();
        } catch (IllegalStateException e) {
            // completed already
        }
    }

    private void close() {
        closed = true;
        forget.get().run();
    }
}
