package io.rulesync.client.stream;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolverRegistry;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.rulesync.client.tls.TrustRoots;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.model.stream.ServerFrame;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One node's stream to the api ({@link NodeSync#STREAM}): frames come to a {@link Listener} as the node asks for them
 * (flow control: a node that stops asking stops the api writing to it), and the node sends {@link NodeFrame}s.
 */
public final class NodeStream {
    /** What the stream brings; called on the channel's executor, one call at a time. */
    public interface Listener {
        /** A frame, as the api made it ({@code ServerFrame.read} checks it). */
        void frame(byte[] frame);

        /** The stream ended; {@code status} says why (OK when the api ended it without a failure). Called once. */
        void ended(Status status);

        /** The api took the stream: its headers arrived (sent at once, before any frame). */
        default void answered() {}
    }

    static {
        NameResolverRegistry.getDefaultRegistry().register(new AddressList());
    }

    private final ClientCall<byte[], byte[]> call;

    private NodeStream(ClientCall<byte[], byte[]> call) {
        this.call = call;
    }

    /**
     * A channel to the api's node streams at {@code target}: {@code host:port}, a list {@code host:port,host:port} (each
     * node holds one of them, picked at random, and moves to another when it goes), or any gRPC target
     * ({@code dns:///streams.rulesync:8081}, whose addresses are used alike).
     *
     * @param loop    the event loop to share (a fleet of simulated nodes in one process), or null for gRPC's own
     * @param inline  run the listener on the event loop rather than on a pool: for listeners that only queue
     */
    public static ManagedChannel channel(String target, EventLoopGroup loop, boolean inline) {
        return channel(target, loop, inline, 0);
    }

    /**
     * {@link #channel(String, EventLoopGroup, boolean)} with an HTTP/2 flow-control window of {@code window} bytes per
     * stream (0: gRPC's, 1 MiB): how much the api may write ahead of what the node has read.
     */
    public static ManagedChannel channel(String target, EventLoopGroup loop, boolean inline, int window) {
        return channel(target, null, loop, inline, window);
    }

    /**
     * A channel as above over TLS, verifying the api's certificate by {@code tls} (null: plain text, which only an api on
     * a loopback address, or one told {@code --insecure-http}, takes).
     */
    public static ManagedChannel channel(
            String target, TrustRoots tls, EventLoopGroup loop, boolean inline, int window) {
        String t = target.contains(":///") ? target : AddressList.target(target);
        if (!target.contains(":///")) {
            AddressList.parse(target); // refused here, naming the item, rather than as a failing connection later
        }
        NettyChannelBuilder b = (tls == null
                        ? NettyChannelBuilder.forTarget(t).usePlaintext()
                        : NettyChannelBuilder.forTarget(t, tls.channelCredentials()))
                .defaultServiceConfig(Map.of(
                        "loadBalancingConfig", List.of(Map.of("pick_first", Map.of("shuffleAddressList", true)))))
                .maxInboundMessageSize(NodeSync.MAX_SERVER_MESSAGE)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true);
        if (window > 0) {
            b.flowControlWindow(window);
        }
        if (loop != null) {
            b.eventLoopGroup(loop).channelType(NioSocketChannel.class);
        }
        if (inline) {
            b.directExecutor();
        }
        return b.build();
    }

    /**
     * Opens the stream of {@code node} of {@code cluster}, with {@code token}; the first {@code window} frames are asked
     * for at once, the rest by {@link #request}. The call waits while a connection is being made, and fails (UNAVAILABLE,
     * with the reason: refused, or a certificate that could not be verified) when none can be: the agent says why, and
     * tries again after its own backoff.
     */
    public static NodeStream open(
            Channel channel, String cluster, String node, String token, int window, Listener listener) {
        ClientCall<byte[], byte[]> call = channel.newCall(NodeSync.STREAM, CallOptions.DEFAULT);
        Metadata headers = new Metadata();
        if (token != null) {
            headers.put(NodeSync.AUTHORIZATION, "Bearer " + token);
        }
        headers.put(NodeSync.CLUSTER, cluster);
        headers.put(NodeSync.NODE, node);
        headers.put(NodeSync.ACCEPT_ENCODING, ServerFrame.DEFLATE);
        call.start(
                new ClientCall.Listener<>() {
                    @Override
                    public void onHeaders(Metadata headers) {
                        listener.answered();
                    }

                    @Override
                    public void onMessage(byte[] message) {
                        listener.frame(message);
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        listener.ended(status);
                    }
                },
                headers);
        if (window > 0) {
            call.request(window);
        }
        return new NodeStream(call);
    }

    /** Sends a frame; not to be called from two threads at once. */
    public void send(NodeFrame frame) {
        call.sendMessage(frame.bytes());
    }

    /** Sends bytes already made (a fleet of simulated nodes sending the same kind of frame). */
    public void send(byte[] frame) {
        call.sendMessage(frame);
    }

    /** Asks for {@code n} more frames. */
    public void request(int n) {
        call.request(n);
    }

    /** Ends the stream from this side. */
    public void cancel(String why) {
        call.cancel(why, null);
    }
}
