package io.rulesync.api.stream;

import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Credentials;
import io.rulesync.api.acks.AckVersions;
import io.rulesync.api.acks.AckWriter;
import io.rulesync.api.deltas.DeltaWaits;
import io.rulesync.client.stream.NodeSync;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node streams this replica holds ({@link NodeSync#STREAM}): how many it takes, which have fallen behind, and
 * ending them all when the replica stops. Each stream is a {@link NodeStreamCall}.
 *
 * <p>A replica holding {@code maxStreams} refuses the next with {@code RESOURCE_EXHAUSTED}: its node backs off with
 * jitter and tries again, on another replica where there is one. A stream whose versions have waited longer than
 * {@code maxFallBehind} for it to read them is ended with the same status (counted in
 * {@code rulesync_streams_fell_behind_total}): as Typha drops a Felix that falls behind, so that a slow node never holds
 * the others or the replica's memory.
 */
public final class NodeStreams implements ServerCalls.BidiStreamingMethod<byte[], byte[]> {
    private static final Logger log = LoggerFactory.getLogger(NodeStreams.class);

    private final Clock clock;
    private final DeltaWaits waits;
    private final AckWriter acks;
    private final AckVersions versions;
    private final Executor work;
    private final int maxStreams;
    private final Duration maxFallBehind;
    private final Set<NodeStreamCall> open = ConcurrentHashMap.newKeySet();
    private final Counter refused;
    private final Counter fellBehind;
    private final Counter frames;
    private final Counter frameBytes;
    private final Counter snapshots;
    private final Counter ackCount;
    private final Counter acksRefused;
    private final Counter revoked;
    private volatile boolean stopping;

    /**
     * @param work          where answers are made when a stream resumes or becomes ready again (they may read PostgreSQL)
     * @param maxStreams    the most streams this replica holds
     * @param maxFallBehind how long versions may wait for a stream that does not read before it is ended
     */
    public NodeStreams(
            DeltaWaits waits,
            AckWriter acks,
            AckVersions versions,
            Executor work,
            int maxStreams,
            Duration maxFallBehind,
            MeterRegistry meters) {
        this(waits, acks, versions, work, maxStreams, maxFallBehind, meters, Clock.systemUTC());
    }

    /** @param clock the api's clock, which decides when a credential has expired */
    public NodeStreams(
            DeltaWaits waits,
            AckWriter acks,
            AckVersions versions,
            Executor work,
            int maxStreams,
            Duration maxFallBehind,
            MeterRegistry meters,
            Clock clock) {
        this.clock = clock;
        this.waits = waits;
        this.acks = acks;
        this.versions = versions;
        this.work = work;
        this.maxStreams = maxStreams;
        this.maxFallBehind = maxFallBehind;
        Gauge.builder("rulesync.streams.open", open, Set::size)
                .description("node streams open on this api replica")
                .register(meters);
        this.refused = Counter.builder("rulesync.streams.refused")
                .description("node streams refused because this replica held its most")
                .register(meters);
        this.fellBehind = Counter.builder("rulesync.streams.fell.behind")
                .description("node streams ended because their node did not read its versions in time")
                .register(meters);
        this.frames = Counter.builder("rulesync.streams.frames")
                .description("frames of deltas written to node streams")
                .register(meters);
        this.frameBytes = Counter.builder("rulesync.streams.frame.bytes")
                .baseUnit("bytes")
                .description(
                        "bytes of the frames of deltas written to node streams, as they travel (deflated where the node takes it)")
                .register(meters);
        this.snapshots = Counter.builder("rulesync.streams.snapshots")
                .description("nodes told on their stream to load a snapshot")
                .register(meters);
        this.ackCount = Counter.builder("rulesync.streams.acks")
                .description("acks received on node streams")
                .register(meters);
        this.acksRefused = Counter.builder("rulesync.streams.acks.refused")
                .description("frames of acks dropped because they named a version their cluster does not have")
                .register(meters);
        this.revoked = Counter.builder("rulesync.streams.revoked")
                .description("node streams ended because their credential was revoked or expired")
                .register(meters);
    }

    /** The service to serve, behind {@link StreamAccess}. */
    public ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(NodeSync.SERVICE)
                .addMethod(NodeSync.STREAM, ServerCalls.asyncBidiStreamingCall(this))
                .build();
    }

    @Override
    public StreamObserver<byte[]> invoke(StreamObserver<byte[]> responses) {
        ServerCallStreamObserver<byte[]> out = (ServerCallStreamObserver<byte[]>) responses;
        StreamAccess.Identity id = StreamAccess.IDENTITY.get();
        if (stopping) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("this api replica is stopping; reconnect")
                    .asRuntimeException());
            return Ignore.INSTANCE;
        }
        if (open.size() >= maxStreams) {
            refused.increment();
            out.onError(Status.RESOURCE_EXHAUSTED
                    .withDescription("this api replica holds " + open.size() + " node streams, its most;"
                            + " try again later or another replica")
                    .asRuntimeException());
            return Ignore.INSTANCE;
        }
        NodeStreamCall call = new NodeStreamCall(
                this, id, Boolean.TRUE.equals(StreamAccess.DEFLATE.get()), out, waits, acks, versions, work);
        open.add(call);
        out.setOnCancelHandler(call::gone);
        out.setOnReadyHandler(call::ready);
        return call;
    }

    /** Streams held now. */
    public int open() {
        return open.size();
    }

    /**
     * Checks every open stream's credential again, after the api's credentials changed: a stream whose credential is no
     * longer valid, or no longer speaks for its node, is ended with {@code UNAUTHENTICATED}. Its node reconnects, and is
     * refused there too.
     */
    public void recheck(Credentials credentials) {
        for (NodeStreamCall c : List.copyOf(open)) {
            StreamAccess.Identity id = c.identity();
            ApiTokens.Caller now = credentials.authenticate(id.bearer()).caller();
            if (now == null || !now.speaksFor(id.cluster(), id.node())) {
                end(c, "its credential was revoked");
            }
        }
    }

    private void end(NodeStreamCall c, String why) {
        revoked.increment();
        StreamAccess.Identity id = c.identity();
        log.atWarn()
                .addKeyValue("cluster", id.cluster())
                .addKeyValue("node", id.node())
                .log(
                        "ending the stream of node {} of cluster {} ({}): {}",
                        id.node(),
                        id.cluster(),
                        id.caller().name(),
                        why);
        c.fail(Status.UNAUTHENTICATED, "the stream's credential is no longer valid: " + why);
    }

    /**
     * Ends every stream whose versions have waited longer than the fall-behind limit, and every stream whose credential
     * expired (a node's ServiceAccount token lives an hour or so; its agent reconnects with the token the kubelet renewed).
     * Called every second.
     */
    public void sweep() {
        long now = System.nanoTime();
        Instant wall = clock.instant();
        for (NodeStreamCall c : List.copyOf(open)) {
            Instant expires = c.identity().caller().expires();
            if (expires != null && !wall.isBefore(expires)) {
                end(c, "it expired at " + expires);
                continue;
            }
            long behind = c.behindNanos(now);
            if (behind > maxFallBehind.toNanos()) {
                fellBehind.increment();
                log.atWarn()
                        .addKeyValue("cluster", c.identity().cluster())
                        .addKeyValue("node", c.identity().node())
                        .log(
                                "node {} of cluster {} has not read its versions for {} s; ending its stream (it resumes from what it runs)",
                                c.identity().node(),
                                c.identity().cluster(),
                                behind / 1_000_000_000L);
                c.fail(
                        Status.RESOURCE_EXHAUSTED,
                        "this node did not read its versions for " + maxFallBehind.toSeconds() + " s; resume from"
                                + " the version it runs");
            }
        }
    }

    /** Ends every stream (its node reconnects, to another replica where there is one) and takes no more. */
    public void stop() {
        stopping = true;
        for (NodeStreamCall c : List.copyOf(open)) {
            c.fail(Status.UNAVAILABLE, "this api replica is stopping; reconnect");
        }
    }

    void ended(NodeStreamCall call) {
        open.remove(call);
    }

    void frameSent(int bytes) {
        frames.increment();
        frameBytes.increment(bytes);
    }

    void snapshotsAsked() {
        snapshots.increment();
    }

    void acksReceived(int n) {
        ackCount.increment(n);
    }

    /** Acks dropped for naming a version their cluster does not have. */
    void acksRefused(StreamAccess.Identity id, String why) {
        acksRefused.increment();
        log.atWarn()
                .addKeyValue("cluster", id.cluster())
                .addKeyValue("node", id.node())
                .log("dropping acks of node {} of cluster {}: {}", id.node(), id.cluster(), why);
    }

    /** What a refused stream's messages go to. */
    private enum Ignore implements StreamObserver<byte[]> {
        INSTANCE;

        @Override
        public void onNext(byte[] value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}
