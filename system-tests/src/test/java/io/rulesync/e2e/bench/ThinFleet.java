package io.rulesync.e2e.bench;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.rulesync.client.ApiClient;
import io.rulesync.client.SnapshotTag;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.e2e.AgentTokens;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.model.stream.ServerFrame;
import io.rulesync.process.Retries;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Thin hollow agents, as kubemark's hollow kubelet is to a kubelet: each holds a node's real connections (its own TCP
 * connection and stream to the api, its snapshot fetched over REST), reads every version's bytes, checks the frame's
 * length and SHA-256 and that its versions follow the one it runs (by number and lineage, from the frame's header), and
 * acks as an agent does (or nacks a frame it refuses), but inflates, parses and validates no rule: a real node does that
 * on its own CPU, measured apart by the agent benchmarks. It takes frames deflated, as agents do. So this process
 * measures what a node costs the control plane, not what two cores pretending to be a thousand nodes cost.
 *
 * <p>No thread per agent: every stream is on one event loop of two threads, handled where it arrives; snapshots come
 * through a few shared HTTP clients; reconnects and delayed acks wait on one timer thread.
 *
 * <p>Arguments: API_URL STREAMS TOKEN SLOW CLUSTER:FIRST:COUNT..., each the nodes node-FIRST on of a cluster. SLOW is
 * {@code cluster/node} of one agent whose acks leave 5 s late and which reads through a 64 KiB window a frame a second,
 * or {@code none}. Runs until its stdin closes.
 */
public final class ThinFleet {
    private static final NioEventLoopGroup LOOP = new NioEventLoopGroup(2, new DefaultThreadFactory("thin-io", true));
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "thin-timer");
        t.setDaemon(true);
        return t;
    });
    private static final AtomicLong REFUSED = new AtomicLong();
    private static final AtomicLong OUT_OF_ORDER = new AtomicLong();
    private static final AtomicLong ENDED = new AtomicLong();

    private final URI api;
    private final String streams;
    /** Each node's own token, made from the benchmark's secret. */
    private final AgentTokens tokens;

    private final List<HttpClient> http = new ArrayList<>();

    private ThinFleet(URI api, String streams, AgentTokens tokens) {
        this.api = api;
        this.streams = streams;
        this.tokens = tokens;
        for (int i = 0; i < 4; i++) {
            http.add(HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(10))
                    .executor(Executors.newFixedThreadPool(1, r -> {
                        Thread t = new Thread(r, "thin-http");
                        t.setDaemon(true);
                        return t;
                    }))
                    .build());
        }
    }

    public static void main(String[] args) throws Exception {
        ThinFleet fleet = new ThinFleet(URI.create(args[0]), args[1], AgentTokens.of(args[2]));
        String slow = args[3];
        List<Thin> agents = new ArrayList<>();
        for (int i = 4; i < args.length; i++) {
            String[] c = args[i].split(":");
            int first = Integer.parseInt(c[1]);
            for (int n = 0; n < Integer.parseInt(c[2]); n++) {
                String node = "node-" + (first + n);
                agents.add(fleet.new Thin(c[0], node, slow.equals(c[0] + "/" + node), agents.size()));
            }
        }
        // "warmed": the parent's cue that the cold start begins (a thin agent has nothing of its own to warm).
        System.out.println("warmed in 0.0 s");
        System.out.flush();
        agents.forEach(Thin::start);
        System.out.println(
                "started " + agents.size() + " thin agents; threads in this process: " + Thread.activeCount());
        System.out.flush();
        TIMER.scheduleAtFixedRate(
                () -> {
                    if (REFUSED.get() + OUT_OF_ORDER.get() > 0) {
                        System.out.println(
                                "frames refused so far: " + REFUSED.get() + ", out of sequence: " + OUT_OF_ORDER.get());
                    }
                },
                10,
                10,
                TimeUnit.SECONDS);
        while (System.in.read() != -1) {
            // the parent keeps stdin open while it wants the fleet
        }
        Runtime.getRuntime().halt(0);
    }

    /** One thin agent. Its listener runs on the event loop; its stream's sends are made under its lock. */
    private final class Thin implements NodeStream.Listener {
        private final String cluster;
        private final String node;
        private final boolean slow;
        private final HttpClient client;
        private final Retries retries = Retries.forNodes();
        private ManagedChannel channel;
        private NodeStream stream;
        private long running = -1;
        private String lineage = Lineage.UNKNOWN;

        Thin(String cluster, String node, boolean slow, int index) {
            this.cluster = cluster;
            this.node = node;
            this.slow = slow;
            this.client = http.get(index % http.size());
        }

        void start() {
            snapshot().thenRun(this::open).whenComplete((v, e) -> {
                if (e != null) {
                    System.out.println(node + " could not start: " + e);
                    System.out.flush();
                }
            });
        }

        /** The node's snapshot, read to its last byte and not parsed; its version and lineage are the ETag's. */
        private CompletableFuture<Void> snapshot() {
            HttpRequest req = new ApiClient(api, tokens.token(cluster, node), client)
                    .clusterRequest(cluster, "versions/latest/snapshot?node=" + node, Duration.ofMinutes(5))
                    .header("Accept-Encoding", "gzip")
                    .GET()
                    .build();
            return client.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray())
                    .thenAccept(r -> {
                        if (r.statusCode() != 200) {
                            throw new IllegalStateException("snapshot of " + node + ": HTTP " + r.statusCode());
                        }
                        SnapshotTag tag =
                                SnapshotTag.parse(r.headers().firstValue("ETag").orElseThrow());
                        synchronized (this) {
                            running = tag.version();
                            lineage = tag.lineage();
                        }
                    })
                    .exceptionallyCompose(e -> {
                        if (retries.failures() == 0) {
                            System.out.println(node + ": " + e.getMessage() + "; trying again");
                            System.out.flush();
                        }
                        CompletableFuture<Void> again = new CompletableFuture<>();
                        TIMER.schedule(
                                () -> snapshot().whenComplete((v, f) -> again.complete(null)),
                                retries.failed().toMillis(),
                                TimeUnit.MILLISECONDS);
                        return again;
                    });
        }

        private synchronized void open() {
            if (channel == null) {
                channel = NodeStream.channel(streams, LOOP, true, slow ? 65_535 : 0);
            } else {
                channel.resetConnectBackoff(); // this agent waited its own jittered time already
            }
            stream = NodeStream.open(channel, cluster, node, tokens.token(cluster, node), slow ? 1 : 4, this);
            stream.send(new NodeFrame.Resume(running, lineage));
            // As an agent acks the version it loaded (and says it again on every new stream).
            stream.send(new NodeFrame.Acks(List.of(applied(running))));
        }

        private NodeAck applied(long v) {
            return new NodeAck(cluster, node, v, v, NodeAck.Status.APPLIED, null, 0, 0, "hollow", Instant.now());
        }

        /** After a snapshot it loaded: where to go on from, and the ack of that version. */
        private synchronized void resumed() {
            if (stream != null) {
                stream.send(new NodeFrame.Resume(running, lineage));
                stream.send(new NodeFrame.Acks(List.of(applied(running))));
            }
        }

        @Override
        public void frame(byte[] bytes) {
            NodeStream from;
            synchronized (this) {
                from = stream;
            }
            if (from == null) {
                return;
            }
            if (slow) {
                TIMER.schedule(() -> from.request(1), 1, TimeUnit.SECONDS);
            } else {
                from.request(1);
            }
            ServerFrame f;
            try {
                f = ServerFrame.read(bytes);
            } catch (IllegalArgumentException e) {
                REFUSED.incrementAndGet();
                ack(new NodeAck(
                        cluster,
                        node,
                        running + 1,
                        running,
                        NodeAck.Status.FAILED,
                        "frame refused: " + e.getMessage(),
                        0,
                        0,
                        "hollow",
                        Instant.now()));
                return;
            }
            if (f instanceof ServerFrame.Snapshot) {
                snapshot().thenRun(this::resumed);
                return;
            }
            ServerFrame.Deltas d = (ServerFrame.Deltas) f;
            long v;
            synchronized (this) {
                if (d.after() != running || !Lineage.agree(lineage, d.baseLineage())) {
                    // Not the versions after the one it runs: an agent would load a snapshot, and so does this one.
                    OUT_OF_ORDER.incrementAndGet();
                    snapshot().thenRun(this::resumed);
                    return;
                }
                running = d.upTo();
                lineage = d.lineage();
                v = running;
            }
            ack(applied(v));
        }

        private void ack(NodeAck a) {
            NodeFrame frame = new NodeFrame.Acks(List.of(a));
            Runnable send = () -> {
                synchronized (this) {
                    if (stream != null) {
                        stream.send(frame);
                    }
                }
            };
            if (slow) {
                TIMER.schedule(send, 5, TimeUnit.SECONDS);
            } else {
                send.run();
            }
        }

        @Override
        public void ended(Status status) {
            if (ENDED.incrementAndGet() <= 10 || ENDED.get() % 1000 == 0) {
                System.out.println(node + "'s stream ended (" + ENDED.get() + " so far): " + status);
                System.out.flush();
            }
            long wait = status.isOk() ? 0 : retries.failed().toMillis();
            synchronized (this) {
                stream = null;
                if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                    channel.shutdownNow(); // a new channel picks again among the replicas
                    channel = null;
                }
            }
            TIMER.schedule(this::open, wait, TimeUnit.MILLISECONDS);
        }
    }
}
