package io.rulesync.agent.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
            StreamFeed feed = new StreamFeed(() -> NodeStream.channel(target, null, false), true, "shop", "n1", () -> "rs_token",
                    () -> 1, Duration.ZERO, clock);
            try {
                feed.poll(Duration.ofMillis(200));
                await().atMost(Duration.ofSeconds(10)).until(() -> held.size() == 1);
                // Well within the limit: the feed waits.
                clock.advance(StreamFeed.CONNECT_TIMEOUT.minusSeconds(1));
                feed.poll(Duration.ofMillis(200));
                assertThat(held).hasSize(1);
                // Past it: the stream is ended, its channel closed, and after the jittered wait a new connection is made.
                clock.advance(Duration.ofSeconds(2));
                feed.poll(Duration.ofMillis(200));
                await().atMost(Duration.ofSeconds(10)).until(() -> held.get(0).getInputStream().read() == -1);
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
