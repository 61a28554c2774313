package io.rulesync.api.stream;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.rulesync.client.stream.NodeSync;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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

    /** A certificate chain and its key, PEM files read again when they change. */
    record Tls(Path cert, Path key) {}

    private final InetSocketAddress address;
    private final NodeStreams streams;
    private final StreamAccess access;
    private final Tls tls;
    private ScheduledExecutorService reloads;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private Server server;

    /** @param tls null: plain text (the api decides where that is allowed) */
    NodeStreamServer(InetSocketAddress address, NodeStreams streams, StreamAccess access, Tls tls) {
        this.address = address;
        this.streams = streams;
        this.access = access;
        this.tls = tls;
    }

    private NettyServerBuilder builder() throws IOException {
        if (tls == null) {
            return NettyServerBuilder.forAddress(address);
        }
        AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
        try {
            keys.updateIdentityCredentials(tls.cert().toFile(), tls.key().toFile()); // a bad file stops the start
        } catch (GeneralSecurityException e) {
            throw new IOException(tls.cert() + ", " + tls.key() + ": " + e.getMessage(), e);
        }
        // Read again every 2 s, by content: a renewed certificate is served to the next connection without a restart.
        // (The key manager's own periodic reload did not take a replaced file here; its one-shot update does.)
        byte[][] loaded = {tlsBytes()};
        reloads = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("stream-tls-reload", true));
        reloads.scheduleWithFixedDelay(
                () -> {
                    try {
                        byte[] now = tlsBytes();
                        if (!Arrays.equals(now, loaded[0])) {
                            keys.updateIdentityCredentials(
                                    tls.cert().toFile(), tls.key().toFile());
                            loaded[0] = now;
                            log.info("node streams: serving the certificate of {} as it changed", tls.cert());
                        }
                    } catch (IOException | GeneralSecurityException | RuntimeException e) {
                        // Half-written (cert-manager replaces both files): tried again on the next round, the old one
                        // served meanwhile.
                        log.warn(
                                "node streams: cannot read the changed certificate {} yet: {}",
                                tls.cert(),
                                e.getMessage());
                    }
                },
                2,
                2,
                TimeUnit.SECONDS);
        return NettyServerBuilder.forAddress(
                address, TlsServerCredentials.newBuilder().keyManager(keys).build());
    }

    @Override
    public synchronized void start() {
        boss = new NioEventLoopGroup(1, new DefaultThreadFactory("stream-accept", true));
        workers = new NioEventLoopGroup(2, new DefaultThreadFactory("stream-io", true));
        try {
            server = builder()
                    .bossEventLoopGroup(boss)
                    .workerEventLoopGroup(workers)
                    .channelType(NioServerSocketChannel.class)
                    .directExecutor()
                    .maxInboundMessageSize(NodeSync.MAX_NODE_MESSAGE)
                    // Dead peers are found without waiting for TCP: a ping every 30 s, answered within 10 s.
                    .keepAliveTime(30, TimeUnit.SECONDS)
                    .keepAliveTimeout(10, TimeUnit.SECONDS)
                    .permitKeepAliveTime(10, TimeUnit.SECONDS)
                    .permitKeepAliveWithoutCalls(true)
                    .addService(ServerInterceptors.intercept(streams.definition(), access))
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve node streams on " + address, e);
        }
        log.info("node streams on port {} ({})", server.getPort(), tls == null ? "plain text" : "TLS");
    }

    private byte[] tlsBytes() throws IOException {
        byte[] cert = Files.readAllBytes(tls.cert());
        byte[] key = Files.readAllBytes(tls.key());
        byte[] both = Arrays.copyOf(cert, cert.length + key.length);
        System.arraycopy(key, 0, both, cert.length, key.length);
        return both;
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
        if (reloads != null) {
            reloads.shutdownNow();
        }
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
