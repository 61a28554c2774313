package io.rulesync.api.stream;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.rulesync.client.stream.NodeSync;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The gRPC server of node streams, on a port of its own beside the REST api's. Two event-loop threads carry every
 * stream; handlers run on them directly (reading a frame and queueing its acks is all they do), which measured a third
 * cheaper per message than handing each to a pool (ARCHITECTURE.md, "Node streams").
 *
 * <p>Stops before the web server: every stream is ended with {@code UNAVAILABLE}, so its node reconnects at once, to
 * another replica where there is one.
 */
public final class NodeStreamServer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(NodeStreamServer.class);

    private final InetSocketAddress address;
    private final NodeStreams streams;
    private final StreamAccess access;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private Server server;

    NodeStreamServer(InetSocketAddress address, NodeStreams streams, StreamAccess access) {
        this.address = address;
        this.streams = streams;
        this.access = access;
    }

    @Override
    public synchronized void start() {
        boss = new NioEventLoopGroup(1, new DefaultThreadFactory("stream-accept", true));
        workers = new NioEventLoopGroup(2, new DefaultThreadFactory("stream-io", true));
        try {
            server = NettyServerBuilder.forAddress(address)
                    .bossEventLoopGroup(boss).workerEventLoopGroup(workers).channelType(NioServerSocketChannel.class)
                    .directExecutor()
                    .maxInboundMessageSize(NodeSync.MAX_NODE_MESSAGE)
                    // Dead peers are found without waiting for TCP: a ping every 30 s, answered within 10 s.
                    .keepAliveTime(30, TimeUnit.SECONDS).keepAliveTimeout(10, TimeUnit.SECONDS)
                    .permitKeepAliveTime(10, TimeUnit.SECONDS).permitKeepAliveWithoutCalls(true)
                    .addService(ServerInterceptors.intercept(streams.definition(), access))
                    .build().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve node streams on " + address, e);
        }
        log.info("node streams on port {}", server.getPort());
    }

    /** The port streams are served on (the one bound, when asked for any). */
    public synchronized int port() {
        return server == null ? -1 : server.getPort();
    }

    @Override
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        streams.stop();
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        server = null;
    }

    @Override
    public synchronized boolean isRunning() {
        return server != null;
    }

    /** Before the web server's graceful shutdown, as the parked polls are released. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
