package io.rulesync.api.stream;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.rulesync.api.acks.AckVersions;
import io.rulesync.api.acks.AckWriter;
import io.rulesync.api.deltas.DeltaWaits;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.KubernetesNames;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.model.stream.ServerFrame;
import java.util.concurrent.Executor;

/**
 * One node's stream on this replica. The node says where it is ({@link NodeFrame.Resume}); from then on every version
 * released to it is written as the frame {@link DeltaWaits} made once for all the nodes waiting on it, and the stream is
 * parked again after it. The node's acks come back on the same stream and go to the {@link AckWriter}'s next batch.
 *
 * <p>Nothing is written to a stream that cannot take it (HTTP/2 flow control: the node stopped reading): the answer is
 * kept, one per stream (its bytes are shared), and sent when the stream is ready again. A stream that stays unready with
 * versions waiting longer than {@link NodeStreams}'s fall-behind limit is ended, and its node resumes from what it runs
 * (or loads a snapshot if that is too far behind). So a stuck node costs the others nothing, and its buffers stay bounded.
 *
 * <p>Everything that may read PostgreSQL (making an answer) runs on {@code work}, never on the transport's threads.
 */
final class NodeStreamCall implements StreamObserver<byte[]> {
    private final NodeStreams streams;
    private final StreamAccess.Identity id;
    /** The node takes frames deflated. */
    private final boolean deflate;

    private final ServerCallStreamObserver<byte[]> out;
    private final DeltaWaits waits;
    private final AckWriter acks;
    private final AckVersions versions;
    private final Executor work;

    /** The newest {@link NodeFrame.Resume} the node sent. */
    private volatile NodeFrame.Resume resumeAt;
    // Guarded by this.
    private Runnable forget = () -> {};
    private long parks;
    /** An answer made while the stream could take no more; sent when it can. */
    private DeltaWaits.Answer pending;

    private long unreadySince;
    private boolean closed;

    NodeStreamCall(
            NodeStreams streams,
            StreamAccess.Identity id,
            boolean deflate,
            ServerCallStreamObserver<byte[]> out,
            DeltaWaits waits,
            AckWriter acks,
            AckVersions versions,
            Executor work) {
        this.streams = streams;
        this.id = id;
        this.deflate = deflate;
        this.out = out;
        this.waits = waits;
        this.acks = acks;
        this.versions = versions;
        this.work = work;
    }

    StreamAccess.Identity identity() {
        return id;
    }

    @Override
    public void onNext(byte[] message) {
        NodeFrame frame;
        try {
            frame = NodeFrame.read(message);
        } catch (IllegalArgumentException e) {
            fail(Status.INVALID_ARGUMENT, "frame: " + KubernetesNames.printable(e.getMessage()));
            return;
        }
        if (frame instanceof NodeFrame.Resume r) {
            // Tasks on a pool may run out of order: each resumes from the newest position the node gave.
            resumeAt = r;
            work.execute(this::resume);
        } else {
            acked(((NodeFrame.Acks) frame).acks());
        }
    }

    private void acked(java.util.List<NodeAck> list) {
        for (int i = 0; i < list.size(); i++) {
            NodeAck a = list.get(i);
            if (!a.cluster().equals(id.cluster()) || !a.node().equals(id.node())) {
                fail(
                        Status.PERMISSION_DENIED,
                        "acks[" + i + "]: the ack is for node '" + KubernetesNames.printable(a.node())
                                + "' of cluster '"
                                + KubernetesNames.printable(a.cluster()) + "'; this stream speaks for node '"
                                + id.node() + "' of cluster '"
                                + id.cluster() + "'");
                return;
            }
        }
        streams.acksReceived(list.size());
        if (versions.withinWatched(list)) {
            store(list);
        } else {
            // Beyond the head this replica has seen: PostgreSQL decides, off the transport's thread.
            work.execute(() -> {
                String beyond = versions.refused("acks", list);
                if (beyond == null) {
                    store(list);
                } else {
                    // Dropped, the stream kept: a node restored onto an older history reconnecting would only be
                    // refused again.
                    streams.acksRefused(id, beyond);
                }
            });
        }
    }

    private void store(java.util.List<NodeAck> list) {
        // Not stored: the stream ends, and the node, reconnecting, sends its newest ack again (it is the node's state).
        acks.write(list).whenComplete((stored, failure) -> {
            if (failure != null) {
                fail(
                        Status.UNAVAILABLE,
                        "storing acks: " + (failure.getCause() == null ? failure : failure.getCause()).getMessage());
            }
        });
    }

    /** Where the node is now: what it runs on a new stream, or after loading a snapshot. */
    private synchronized void resume() {
        if (closed) {
            return;
        }
        forget.run();
        pending = null;
        NodeFrame.Resume r = resumeAt;
        park(r.after(), r.lineage());
    }

    /** Waits for the versions after {@code after}, of {@code lineage} (unknown: after versions this stream wrote). */
    private synchronized void park(long after, String lineage) {
        long park = ++parks;
        Runnable f;
        try {
            f = waits.request(
                    id.cluster(),
                    id.node(),
                    after,
                    lineage,
                    this::answered,
                    e -> fail(Status.UNAVAILABLE, e.getMessage()));
        } catch (RuntimeException e) {
            // The cluster's head or rollout could not be read (the database is away): a stream neither parked nor ended
            // would wait for good, so it ends, and the node reconnects after its backoff.
            fail(Status.UNAVAILABLE, "reading the versions of cluster '" + id.cluster() + "': " + e.getMessage());
            return;
        }
        // An answer ready at once is written (and parked after) inside request(): its park is the newer, keep its
        // handle.
        if (park == parks) {
            forget = f;
        }
        if (closed) {
            forget.run();
        }
    }

    /** A new answer for this node: written now if the stream can take it, else kept until it can. */
    private synchronized void answered(DeltaWaits.Answer a) {
        if (closed) {
            return;
        }
        if (a instanceof DeltaWaits.Answer.Stopping) {
            fail(Status.UNAVAILABLE, "this api replica is stopping; reconnect");
            return;
        }
        if (a instanceof DeltaWaits.Answer.UnknownCluster) {
            fail(Status.NOT_FOUND, "cluster '" + id.cluster() + "' has no version");
            return;
        }
        if (!out.isReady()) {
            if (pending == null) {
                unreadySince = System.nanoTime();
            }
            pending = a;
            return;
        }
        pending = null;
        if (a instanceof DeltaWaits.Answer.Deltas d) {
            byte[] frame = d.frame(deflate);
            out.onNext(frame);
            streams.frameSent(frame.length);
            park(d.upTo(), Lineage.UNKNOWN);
        } else if (a instanceof DeltaWaits.Answer.Snapshot s) {
            // No park: the node loads a snapshot and then says where it is.
            out.onNext(ServerFrame.snapshot(s.head(), s.why()));
            streams.snapshotsAsked();
        }
    }

    /** The transport can take more: what waited goes now (off the transport's thread, as parking may read PostgreSQL). */
    void ready() {
        synchronized (this) {
            if (pending == null || closed) {
                return;
            }
        }
        work.execute(() -> {
            synchronized (this) {
                if (pending != null && !closed && out.isReady()) {
                    DeltaWaits.Answer a = pending;
                    pending = null;
                    answered(a);
                }
            }
        });
    }

    /** How long versions have waited for this stream to take them, in nanoseconds; 0 when none wait. */
    synchronized long behindNanos(long now) {
        return pending == null || closed ? 0 : now - unreadySince;
    }

    /** Ends the stream with {@code status}: the node hears why, and reconnects as that says. */
    void fail(Status status, String why) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            forget.run();
            pending = null;
        }
        streams.ended(this);
        try {
            out.onError(status.withDescription(why).asRuntimeException());
        } catch (IllegalStateException alreadyClosed) {
            // the node went away meanwhile
        }
    }

    /** The node went away, or closed its side. */
    void gone() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            forget.run();
            pending = null;
        }
        streams.ended(this);
    }

    @Override
    public void onError(Throwable t) {
        gone();
    }

    @Override
    public void onCompleted() {
        gone();
        try {
            out.onCompleted();
        } catch (IllegalStateException alreadyClosed) {
            // cancelled meanwhile
        }
    }
}
