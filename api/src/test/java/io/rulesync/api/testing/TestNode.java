package io.rulesync.api.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.model.stream.ServerFrame;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A node's end of a node stream, as a test plays it with the client agents use: what arrived, in order. */
public final class TestNode implements NodeStream.Listener, AutoCloseable {
    private final LinkedBlockingQueue<Object> arrived = new LinkedBlockingQueue<>();
    private final ManagedChannel channel;
    public final NodeStream stream;

    /** Opens the stream of {@code node} of {@code cluster} on {@code channel}, which this closes. */
    public TestNode(ManagedChannel channel, String cluster, String node, String token, int window) {
        this(channel, channel, cluster, node, token, window);
    }

    /** ... the stream opened on {@code via} (the channel with interceptors of the test's), {@code channel} closed. */
    public TestNode(ManagedChannel channel, Channel via, String cluster, String node, String token, int window) {
        this.channel = channel;
        this.stream = NodeStream.open(via, cluster, node, token, window, this);
    }

    @Override
    public void frame(byte[] frame) {
        arrived.add(ServerFrame.read(frame));
    }

    @Override
    public void ended(Status status) {
        arrived.add(status);
    }

    /** What arrives next, within 20 s. */
    public Object next() throws InterruptedException {
        return next(20);
    }

    /** What arrives next, within {@code seconds}. */
    public Object next(int seconds) throws InterruptedException {
        Object o = arrived.poll(seconds, TimeUnit.SECONDS);
        assertThat(o).as("nothing arrived within " + seconds + " s").isNotNull();
        return o;
    }

    public ServerFrame.Deltas deltas() throws InterruptedException {
        Object o = next(20);
        assertThat(o).as(String.valueOf(o)).isInstanceOf(ServerFrame.Deltas.class);
        return (ServerFrame.Deltas) o;
    }

    /** How the stream ended, within 20 s. */
    public Status end() throws InterruptedException {
        return end(20);
    }

    /** How the stream ended, within {@code seconds}. */
    public Status end(int seconds) throws InterruptedException {
        Object o = next(seconds);
        assertThat(o).as(String.valueOf(o)).isInstanceOf(Status.class);
        return (Status) o;
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
