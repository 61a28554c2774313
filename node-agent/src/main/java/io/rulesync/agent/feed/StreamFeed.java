package io.rulesync.agent.feed;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.model.stream.ServerFrame;
import io.rulesync.process.Retries;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deltas and acks on one long-lived stream to the api ({@code NodeSync}): the node says which version it runs, the api
 * writes each version released to it as it is stored, and the node's acks go back on the same stream, as an Envoy
 * node's acknowledgement rides its xDS stream. The agent's loop drives it: {@link #poll} opens the stream once the agent
 * runs a version, hands over what arrived, and sends what is due; {@link #publish} queues an ack.
 *
 * <p>An ack is the node's state, not a message to deliver once: the api stores each node's newest ack and newest
 * failure. So a stream that ends (the replica stopped, its database could not store an ack) is opened again, after a
 * jittered wait ({@link Retries#forNodes}), and starts by sending the newest failure and the newest ack again.
 *
 * <p>Frames are asked for a few at a time, as the agent takes them: an agent that stops reading stops the api writing to
 * it (HTTP/2 flow control), and the api ends a stream that stays behind too long.
 */
public final class StreamFeed implements DeltaSource, AckSink {
    private static final Logger log = LoggerFactory.getLogger(StreamFeed.class);
    /** Frames asked for ahead of what the agent has taken. */
    static final int WINDOW = 4;
    /**
     * How long a new stream may wait for the api to take it (its headers, sent at once): a connection accepted but never
     * answered (a replica dying as the node reconnected), or a stream gRPC's channel keeps queued while it says READY
     * (grpc-java issue 12958), would otherwise hold the node for good, since the stream has no deadline.
     */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(20);
    /** The most acks kept while none can be sent: the api stores only the newest (and the newest failure). */
    static final int KEPT = 100;

    private sealed interface Arrival {}

    private record Frame(NodeStream from, byte[] bytes) implements Arrival {}

    private record End(NodeStream from, Status status) implements Arrival {}

    private final Supplier<ManagedChannel> channels;
    private final boolean ownsChannel;
    private final String cluster;
    private final String node;
    private final Supplier<String> token;
    private final LongSupplier running;
    private final Supplier<String> runningLineage;
    private final Duration ackInterval;
    private final Clock clock;
    private final LinkedBlockingQueue<Arrival> arrivals = new LinkedBlockingQueue<>();
    private final Retries retries = Retries.forNodes();

    // The agent's loop thread only, but for close().
    private ManagedChannel channel;
    private NodeStream stream;
    private Instant openedAt = Instant.MIN;
    /** The newest stream the api took (its headers arrived); set on gRPC's thread. */
    private volatile NodeStream answered;

    private long resumedAt = -1;
    private String resumedLineage = Lineage.UNKNOWN;
    private boolean snapshotAsked;
    private long delivered = -1;
    private String deliveredLineage = Lineage.UNKNOWN;
    private Instant retryAt = Instant.MIN;
    private final Deque<NodeAck> unsent = new ArrayDeque<>();
    private NodeAck newest;
    private NodeAck newestFailure;
    private long lastAcksSentNanos;
    private boolean closed;

    /**
     * @param channels    makes the channel to the api's streams; when {@code ownsChannel}, called again for each attempt
     *                    after a stream failed, so that it may land on another replica
     * @param running     the version the agent runs (-1: none yet; the stream opens once there is one)
     * @param runningLineage that version's lineage, sent along so that the api can tell a version of another history
     * @param ackInterval the least time between two frames of acks (zero: each ack at once); a failure never waits
     */
    public StreamFeed(
            Supplier<ManagedChannel> channels,
            boolean ownsChannel,
            String cluster,
            String node,
            Supplier<String> token,
            LongSupplier running,
            Supplier<String> runningLineage,
            Duration ackInterval,
            Clock clock) {
        this.channels = channels;
        this.ownsChannel = ownsChannel;
        this.cluster = cluster;
        this.node = node;
        this.token = token;
        this.running = running;
        this.runningLineage = runningLineage;
        this.ackInterval = ackInterval;
        this.clock = clock;
        this.lastAcksSentNanos = System.nanoTime() - ackInterval.toNanos();
    }

    @Override
    public void start(Duration timeout) {
        log.atInfo().addKeyValue("cluster", cluster).log("streaming deltas of cluster {} from the api", cluster);
    }

    @Override
    public Polled poll(Duration wait) {
        open();
        resume();
        sendAcks();
        giveUpOnAConnectionNeverReady();
        Arrival first;
        try {
            first = arrivals.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Polled.NOTHING;
        }
        if (first == null) {
            return Polled.NOTHING;
        }
        List<Arrival> batch = new ArrayList<>(List.of(first));
        arrivals.drainTo(batch);
        List<RulesDelta> deltas = new ArrayList<>();
        String gap = null;
        for (Arrival a : batch) {
            if (a instanceof Frame f && f.from() == stream) {
                stream.request(1);
                gap = read(f.bytes(), deltas, gap);
            } else if (a instanceof End e && e.from() == stream) {
                ended(e.status());
            }
        }
        return deltas.isEmpty() && gap == null ? Polled.NOTHING : new Polled(deltas, gap);
    }

    /** Opens the stream once the agent runs a version and no wait for a retry is on. */
    private void open() {
        if (stream != null
                || closed
                || running.getAsLong() < 1
                || clock.instant().isBefore(retryAt)) {
            return;
        }
        if (channel == null) {
            channel = channels.get();
        } else if (!ownsChannel) {
            // The wait before this attempt was this node's own, drawn at random: gRPC's reconnect backoff on top of it
            // would only make a lost replica's nodes wait longer for the others.
            channel.resetConnectBackoff();
        }
        NodeStream[] self = new NodeStream[1];
        self[0] = NodeStream.open(channel, cluster, node, token.get(), WINDOW, new NodeStream.Listener() {
            @Override
            public void frame(byte[] frame) {
                arrivals.add(new Frame(self[0], frame));
            }

            @Override
            public void ended(Status status) {
                arrivals.add(new End(self[0], status));
            }

            @Override
            public void answered() {
                answered = self[0];
            }
        });
        stream = self[0];
        openedAt = clock.instant();
        resumedAt = -1;
        snapshotAsked = false;
        // The node's state first: what a stream that ended may not have stored.
        if (newestFailure != null && !unsent.contains(newestFailure)) {
            unsent.addFirst(newestFailure);
        }
        if (newest != null && !unsent.contains(newest)) {
            unsent.addLast(newest);
        }
    }

    /** Ends a stream the api has not taken within {@link #CONNECT_TIMEOUT}; a new channel is made for the next. */
    private void giveUpOnAConnectionNeverReady() {
        if (stream == null
                || channel == null
                || answered == stream
                || clock.instant().isBefore(openedAt.plus(CONNECT_TIMEOUT))) {
            return;
        }
        ConnectivityState state = channel.getState(false);
        String why = "the api did not take the stream within " + CONNECT_TIMEOUT.toSeconds() + " s (the channel is "
                + state + ")";
        stream.cancel(why);
        // Ended here, not when gRPC reports the cancel: a stream stuck inside the channel may never report it. What it
        // reports later belongs to a stream that is no longer this one, and is dropped.
        ended(Status.DEADLINE_EXCEEDED.withDescription(why));
    }

    /** Tells the api where to go on from: at the start of a stream, and once a snapshot it asked for is loaded. */
    private void resume() {
        if (stream == null) {
            return;
        }
        long runs = running.getAsLong();
        String lineage = runningLineage.get();
        // After a snapshot: once the node runs another version, a lower one too (a restore from a backup took the newer
        // ones away), or the same number of another lineage.
        if (resumedAt < 0 || (snapshotAsked && (runs != resumedAt || !lineage.equals(resumedLineage)))) {
            long after = Math.max(runs, delivered);
            resumedLineage = after == runs ? lineage : deliveredLineage;
            stream.send(new NodeFrame.Resume(after, resumedLineage));
            resumedAt = after;
            snapshotAsked = false;
        }
    }

    @Override
    public void publish(NodeAck ack) {
        synchronized (unsent) {
            newest = ack;
            if (ack.status() == NodeAck.Status.FAILED) {
                newestFailure = ack;
            }
            unsent.addLast(ack);
            while (unsent.size() > KEPT) {
                unsent.removeFirst();
            }
        }
        sendAcks();
    }

    /** Sends the acks queued, when the stream is open and the interval has passed (or one is a failure). */
    private void sendAcks() {
        synchronized (unsent) {
            if (stream == null || unsent.isEmpty()) {
                return;
            }
            boolean failure = unsent.stream().anyMatch(a -> a.status() == NodeAck.Status.FAILED);
            if (!failure && System.nanoTime() - lastAcksSentNanos < ackInterval.toNanos()) {
                return;
            }
            stream.send(new NodeFrame.Acks(List.copyOf(unsent)));
            unsent.clear();
            lastAcksSentNanos = System.nanoTime();
        }
    }

    /** A frame's deltas into {@code out}; returns the gap to report (a snapshot the api asked for), or {@code gap}. */
    private String read(byte[] bytes, List<RulesDelta> out, String gap) {
        ServerFrame frame;
        String lines = null;
        try {
            frame = ServerFrame.read(bytes);
            if (frame instanceof ServerFrame.Deltas d) {
                lines = d.text(); // inflated here if it came deflated: a body that does not inflate is refused
                // as a bad frame
            }
        } catch (IllegalArgumentException e) {
            // Bytes that are not what the api made: nothing of them is applied; a new stream starts from what the node
            // runs.
            log.atWarn()
                    .addKeyValue("cluster", cluster)
                    .log("refusing a frame from the api: {}; opening the stream again", e.getMessage());
            stream.cancel("unreadable frame");
            return gap;
        }
        if (frame instanceof ServerFrame.Snapshot s) {
            snapshotAsked = true;
            // What was handed over may not follow any more (another history): the node goes on from what it runs.
            delivered = -1;
            deliveredLineage = Lineage.UNKNOWN;
            return "the api: " + s.why();
        }
        for (String line : lines.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            try {
                RulesDelta delta = RulesDelta.fromJson(line);
                if (!delta.cluster().equals(cluster)) {
                    throw new IllegalArgumentException("a delta of cluster " + delta.cluster());
                }
                out.add(delta);
                if (delta.target() > delivered) {
                    delivered = delta.target();
                    deliveredLineage = delta.lineage();
                }
            } catch (RuntimeException e) {
                // A delta the agent cannot read is a gap: the next readable one asks for a snapshot.
                log.atWarn().addKeyValue("cluster", cluster).log("skipping an unreadable delta: {}", e.getMessage());
            }
        }
        retries.succeeded();
        return gap;
    }

    /** The stream ended: opened again at once if the api just closed it, else after a jittered wait. */
    private void ended(Status status) {
        stream = null;
        if (closed) {
            return;
        }
        Duration wait = status.isOk() ? Duration.ZERO : retries.failed();
        retryAt = clock.instant().plus(wait);
        if (!status.isOk() && ownsChannel && channel != null) {
            // The next attempt gets a new channel: it picks again among the replicas (this one may be full, or gone),
            // and
            // it has no state of gRPC's own. A channel kicked out of its reconnect backoff right after a refused
            // connection was seen here to report READY once the api was back while the new stream stayed queued inside
            // it
            // for good (legacy pick_first after a resolver refresh, grpc-java issue 12958): the node never resumed.
            channel.shutdownNow();
            channel = null;
        }
        if (!status.isOk()) {
            // The cause says what the description does not: a refused connection, a certificate that could not be
            // verified.
            Throwable cause = status.getCause();
            while (cause != null && cause.getCause() != null && cause.getCause() != cause) {
                cause = cause.getCause(); // "General OpenSslEngine problem" wraps "PKIX path building failed"
            }
            log.atWarn()
                    .addKeyValue("cluster", cluster)
                    .log(
                            "node stream ended: {}{}{}; opening it again in {} ms",
                            status.getCode(),
                            status.getDescription() == null ? "" : ": " + status.getDescription(),
                            cause == null || cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")",
                            wait.toMillis());
        }
    }

    @Override
    public void wakeup() {
        // poll waits at most its own wait
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (stream != null) {
            stream.cancel("the agent is stopping");
        }
        if (ownsChannel && channel != null) {
            channel.shutdownNow();
        }
    }
}
