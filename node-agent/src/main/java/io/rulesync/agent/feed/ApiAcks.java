package io.rulesync.agent.feed;

import io.rulesync.client.ApiClient;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.process.Retries;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acks to the api, {@code POST /api/v1/clusters/{c}/nodes/{n}/acks}, in order and one request at a time (with every ack
 * queued meanwhile), without blocking the agent: {@link #publish} queues and returns. An ack the api could not take (down,
 * or its database is) is sent again after 1, 2, 4 ... 30 s; one it refuses (4xx) is dropped and said. The queue keeps the
 * newest {@value #KEPT}: the api stores only a node's newest ack, so older ones matter only for a failure they carry.
 *
 * <p>With an interval, requests are at least that far apart and carry what piled up meanwhile: a large fleet reports
 * convergence at a rate it chooses rather than one row per node and version (ARCHITECTURE.md, "Capacity"). A failure
 * does not wait for the interval.
 */
public final class ApiAcks implements AckSink {
    static final int KEPT = 100;
    private static final Logger log = LoggerFactory.getLogger(ApiAcks.class);

    private final ApiClient api;
    private final Duration interval;
    private final Deque<NodeAck> queue = new ArrayDeque<>();
    /** A request is out, or one is due: publish only queues. */
    private boolean sending;

    private boolean closed;
    /** The next request, while it waits for the interval (not for a retry): a failure sends it at once. */
    private CompletableFuture<Void> dueAfterInterval;

    private long lastSentNanos;
    private final Retries retry = Retries.forRequests();

    /** @param interval the least time between two requests (zero: send as soon as the previous one is answered) */
    public ApiAcks(ApiClient api, Duration interval) {
        this.api = api;
        this.interval = interval;
        this.lastSentNanos = System.nanoTime() - interval.toNanos();
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
                log.atWarn()
                        .addKeyValue("cluster", dropped.cluster())
                        .addKeyValue("node", dropped.node())
                        .log(
                                "more than {} acks waiting for the api; dropping the oldest (version {})",
                                KEPT,
                                dropped.version());
            }
            if (!sending) {
                sending = true;
                sendAfter(ack.status() == NodeAck.Status.FAILED ? 0 : untilInterval(), true);
            } else if (ack.status() == NodeAck.Status.FAILED && dueAfterInterval != null) {
                dueAfterInterval.complete(null);
            }
        }
    }

    /** Milliseconds until the interval since the last request has passed. */
    private long untilInterval() {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(interval.toNanos() - (System.nanoTime() - lastSentNanos)));
    }

    /**
     * Sends every queued ack, oldest first, in one request after {@code delayMs} (what is queued by then goes with it);
     * called holding the queue's lock. Under load a node sends fewer, larger requests, and the api still sees every
     * failure (it stores the newest ack and the newest failure of each node).
     */
    private void sendAfter(long delayMs, boolean forInterval) {
        if (queue.isEmpty() || closed) {
            sending = false;
            return;
        }
        if (delayMs == 0) {
            send();
            return;
        }
        // Waited out on the delay's own timer thread: the default would start a thread per wait here.
        CompletableFuture<Void> due = CompletableFuture.runAsync(
                () -> {}, CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS, Runnable::run));
        dueAfterInterval = forInterval ? due : null;
        due.thenRun(() -> {
            synchronized (queue) {
                dueAfterInterval = null;
                if (queue.isEmpty() || closed) {
                    sending = false;
                } else {
                    send();
                }
            }
        });
    }

    /** One request with every queued ack; called holding the queue's lock. */
    private void send() {
        List<NodeAck> batch = new ArrayList<>(queue);
        NodeAck first = batch.get(0);
        StringBuilder body = new StringBuilder("[");
        batch.forEach(a -> body.append(body.length() == 1 ? "" : ",").append(a.toJson()));
        HttpRequest req = api.clusterRequest(
                        first.cluster(), "nodes/" + ApiClient.encode(first.node()) + "/acks", Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.append(']').toString()))
                .build();
        lastSentNanos = System.nanoTime();
        api.http()
                .sendAsync(req, HttpResponse.BodyHandlers.ofString())
                .whenComplete((resp, failure) -> sent(batch, req, resp, failure));
    }

    private void sent(List<NodeAck> batch, HttpRequest req, HttpResponse<String> resp, Throwable failure) {
        synchronized (queue) {
            int status = resp == null ? 0 : resp.statusCode();
            NodeAck last = batch.get(batch.size() - 1);
            if (status / 100 == 2 || status / 100 == 4) {
                if (status / 100 == 4) {
                    log.atWarn()
                            .addKeyValue("cluster", last.cluster())
                            .addKeyValue("node", last.node())
                            .log(
                                    "acks up to version {} " + "refused: POST {}: HTTP {} {}",
                                    last.version(),
                                    req.uri(),
                                    status,
                                    ApiClient.abbreviate(resp.body()));
                }
                batch.forEach(queue::remove);
                queue.notifyAll();
                retry.succeeded();
                boolean failed = queue.stream().anyMatch(a -> a.status() == NodeAck.Status.FAILED);
                sendAfter(failed ? 0 : untilInterval(), true);
                return;
            }
            long waitMs = retry.failed().toMillis();
            if (waitMs > 0) {
                log.atWarn()
                        .addKeyValue("cluster", last.cluster())
                        .addKeyValue("node", last.node())
                        .log(
                                "acks up to version {} not " + "taken: POST {}: {}; sending them again in {} s",
                                last.version(),
                                req.uri(),
                                failure != null
                                        ? failure.toString()
                                        : "HTTP " + status + " " + ApiClient.abbreviate(resp.body()),
                                waitMs / 1000);
            }
            sendAfter(waitMs, false);
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
            if (dueAfterInterval != null) {
                dueAfterInterval.complete(null); // the last word goes now, not after the interval
            }
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
