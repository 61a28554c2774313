package io.rulesync.agent.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.testsupport.MutableClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class StreamFeedTest {
    /**
     * After a failed stream the next attempt gets a channel of its own: the api's replica may be another one by then, and a
     * channel kept through refused connections was seen to queue the new stream for good once the api was back.
     */
    @Test
    void eachAttemptAfterAFailedStreamIsOnANewChannel() throws Exception {
        // Nothing listens on port 1, so every connection is refused. (A port found free and closed again is in the
        // ephemeral range: a connection to it may be given it as its own source port and connect to itself.)
        String target = "127.0.0.1:1";
        List<ManagedChannel> made = new CopyOnWriteArrayList<>();
        MutableClock clock = new MutableClock();
        StreamFeed feed = new StreamFeed(
                () -> {
                    ManagedChannel c = NodeStream.channel(target, null, false);
                    made.add(c);
                    return c;
                },
                true,
                "shop",
                "n1",
                () -> "rs_token",
                () -> 1,
                () -> "",
                Duration.ZERO,
                clock);
        try {
            for (int attempt = 1; attempt <= 3; attempt++) {
                int before = made.size();
                // Each refused stream ends its channel; the next poll after the jittered wait makes a new one.
                for (int i = 0; i < 50 && made.size() == before; i++) {
                    clock.advance(Duration.ofSeconds(30));
                    feed.poll(Duration.ofMillis(100));
                }
                assertThat(made).hasSize(attempt);
                // Refused at once, as a rule; gRPC's channel sometimes keeps such a stream queued instead (a race in
                // its
                // pick_first), which the feed ends once the api has not taken it within its limit.
                await().pollInSameThread().atMost(Duration.ofSeconds(10)).until(() -> {
                    feed.poll(Duration.ofMillis(50)); // the agent's loop, one thread
                    clock.advance(Duration.ofSeconds(5));
                    return made.get(made.size() - 1).isShutdown();
                });
            }
        } finally {
            feed.close();
        }
    }

    /**
     * A replica dying as the node reconnects may take the connection and never answer: the stream, which has no deadline,
     * would wait for it for good. The feed gives such a connection {@link StreamFeed#CONNECT_TIMEOUT} and tries a new one.
     */
    @Test
    void aConnectionThatIsNeverAnsweredIsGivenUpAndANewOneTried() throws Exception {
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(silent.accept()); // accepted, and never a byte of HTTP/2 back
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            MutableClock clock = new MutableClock();
            String target = "127.0.0.1:" + silent.getLocalPort();
            StreamFeed feed = new StreamFeed(
                    () -> NodeStream.channel(target, null, false),
                    true,
                    "shop",
                    "n1",
                    () -> "rs_token",
                    () -> 1,
                    () -> "",
                    Duration.ZERO,
                    clock);
            try {
                feed.poll(Duration.ofMillis(200));
                await().atMost(Duration.ofSeconds(10)).until(() -> held.size() == 1);
                // Well within the limit: the feed waits.
                clock.advance(StreamFeed.CONNECT_TIMEOUT.minusSeconds(1));
                feed.poll(Duration.ofMillis(200));
                assertThat(held).hasSize(1);
                // Past it: the stream is ended, its channel closed, and after the jittered wait a new connection is
                // made.
                clock.advance(Duration.ofSeconds(2));
                feed.poll(Duration.ofMillis(200));
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> held.get(0).getInputStream().read() == -1);
                for (int i = 0; i < 20 && held.size() < 2; i++) {
                    clock.advance(Duration.ofSeconds(30));
                    feed.poll(Duration.ofMillis(200));
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> held.size() == 2);
            } finally {
                feed.close();
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
