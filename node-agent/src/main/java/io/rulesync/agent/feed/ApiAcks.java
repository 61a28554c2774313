package io.rulesync.agent.feed;

import io.rulesync.model.ack.NodeAck;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acks to the api, {@code POST /api/v1/clusters/{c}/nodes/{n}/acks}, in order and one at a time, without blocking the
 * agent: {@link #publish} queues and returns. An ack the api could not take (down, or its database is) is sent again
 * after 1, 2, 4 ... 30 s; one it refuses (4xx) is dropped and said. The queue keeps the newest {@value #KEPT}: the api
 * stores only a node's newest ack, so older ones matter only for a failure they carry.
 */
public final class ApiAcks implements AckSink {
    static final int KEPT = 100;
    private static final Logger log = LoggerFactory.getLogger(ApiAcks.class);
    private static final long MAX_BACKOFF_MS = 30_000;

    private final ApiConnection api;
    private final Consumer<NodeAck> stored;
    private final Deque<NodeAck> queue = new ArrayDeque<>();
    private boolean sending;
    private boolean closed;
    private long backoffMs;

    public ApiAcks(ApiConnection api) {
        this(api, ack -> { });
    }

    /** @param stored told of each ack the api took (2xx), on the HTTP client's thread: benchmarks time acks by it */
    public ApiAcks(ApiConnection api, Consumer<NodeAck> stored) {
        this.api = api;
        this.stored = stored;
    }

    @Override
    public void publish(NodeAck ack) {
        synchronized (queue) {
            if (closed) {
                return;
            }
            queue.addLast(ack);
            if (queue.size() > KEPT) {
                NodeAck dropped = queue.removeFirst();
                log.atWarn().addKeyValue("cluster", dropped.cluster()).addKeyValue("node", dropped.node())
                        .log("more than {} acks waiting for the api; dropping the oldest (version {})", KEPT, dropped.version());
            }
            if (!sending) {
                sending = true;
                sendNext(0);
            }
        }
    }

    /** Sends the oldest queued ack after {@code delayMs}; called holding the queue's lock. */
    private void sendNext(long delayMs) {
        NodeAck ack = queue.peekFirst();
        if (ack == null || closed) {
            sending = false;
            return;
        }
        HttpRequest req = api.request(ack.cluster(), "nodes/" + ApiConnection.encode(ack.node()) + "/acks", Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(ack.toJson())).build();
        CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS))
                .thenCompose(x -> api.http().sendAsync(req, HttpResponse.BodyHandlers.ofString()))
                .whenComplete((resp, failure) -> sent(ack, req, resp, failure));
    }

    private void sent(NodeAck ack, HttpRequest req, HttpResponse<String> resp, Throwable failure) {
        synchronized (queue) {
            int status = resp == null ? 0 : resp.statusCode();
            if (status / 100 == 2 || status / 100 == 4) {
                if (status / 100 == 2) {
                    stored.accept(ack);
                } else {
                    log.atWarn().addKeyValue("cluster", ack.cluster()).addKeyValue("node", ack.node()).log("ack of version {} refused: "
                            + "POST {}: HTTP {} {}", ack.version(), req.uri(), status, ApiConnection.abbreviate(resp.body()));
                }
                queue.remove(ack);
                queue.notifyAll();
                backoffMs = 0;
                sendNext(0);
                return;
            }
            backoffMs = backoffMs == 0 ? 1_000 : Math.min(MAX_BACKOFF_MS, backoffMs * 2);
            log.atWarn().addKeyValue("cluster", ack.cluster()).addKeyValue("node", ack.node()).log("ack of version {} not taken: POST {}: "
                    + "{}; sending it again in {} s", ack.version(), req.uri(), failure != null ? failure.toString()
                    : "HTTP " + status + " " + ApiConnection.abbreviate(resp.body()), backoffMs / 1000);
            sendNext(backoffMs);
        }
    }

    /** Acks not yet taken by the api (tests, and the agent's shutdown). */
    public int pending() {
        synchronized (queue) {
            return queue.size();
        }
    }

    /** Gives the queued acks up to 2 s to reach the api (a stopping agent's last ack says what it left applied). */
    @Override
    public void close() {
        synchronized (queue) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            try {
                while (!queue.isEmpty() && System.nanoTime() < deadline) {
                    queue.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closed = true;
        }
    }
}
