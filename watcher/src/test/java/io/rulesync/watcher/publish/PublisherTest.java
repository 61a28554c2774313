package io.rulesync.watcher.publish;

import static io.rulesync.watcher.testing.ModelObjects.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.watcher.publish.EventSink.Delivery;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.RecordingSink;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PublisherTest {
    /** Generous: CI machines are slow, and no test asserts on time. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static final Publisher.Options FAST =
            new Publisher.Options(500, Duration.ofMillis(10), Duration.ofMillis(100));

    private final PendingEvents pending = new PendingEvents();
    private final ClusterFeed feed = new ClusterFeed("prod", pending::offer, Clock.systemUTC());
    private Publisher publisher;

    @AfterEach
    void stop() {
        if (publisher != null) {
            publisher.close(Duration.ofSeconds(5));
        }
    }

    private static List<Integer> portsOf(List<ClusterEvent> events, String name) {
        List<Integer> out = new ArrayList<>();
        for (ClusterEvent e : events) {
            if (e instanceof ObjectUpserted u && u.ref().key().equals("ns/" + name)) {
                out.add(((Service) u.object()).ports().get(0).port());
            }
        }
        return out;
    }

    @Test
    void whileKafkaIsSlowOnlyTheLatestStateOfAKeyWaits() {
        RecordingSink sink = new RecordingSink();
        sink.block();
        publisher = new Publisher(pending, sink, () -> {}, FAST).start();
        feed.upsert(service("ns", "web", 1), "1");
        await("the first send to be stuck in the slow sink").atMost(DEADLINE).until(() -> sink.sends() == 1);
        for (int port = 2; port <= 1000; port++) {
            feed.upsert(service("ns", "web", port), String.valueOf(port));
        }
        assertThat(pending.size()).isEqualTo(1);
        sink.open();
        sink.await("the latest state", ev -> portsOf(ev, "web").contains(1000));
        assertThat(portsOf(sink.events(), "web")).containsExactly(1, 1000);
    }

    /** A sink that is slow (0-2 ms per batch) and fails every fifth batch, at random but seeded. */
    private static final class FlakySink implements EventSink {
        private final Random random = new Random(42);
        private final RecordingSink inner = new RecordingSink();

        @Override
        public Delivery send(List<ClusterEvent> events) {
            try {
                Thread.sleep(random.nextInt(3)); // the slowness under test, not a wait
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return random.nextInt(5) == 0
                    ? Delivery.failedFrom(0, events.size(), new RuntimeException("flaky"))
                    : inner.send(events);
        }

        @Override
        public void close() {}
    }

    @Test
    void concurrentUpdatesNeverPublishAnOlderStateAfterANewerOne() throws Exception {
        FlakySink sink = new FlakySink();
        publisher = new Publisher(pending, sink, () -> {}, FAST).start();
        int n = 3000;
        List<Thread> writers = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            Thread t = new Thread(() -> {
                for (int port = 1; port <= n; port++) {
                    feed.upsert(service("ns", name, port), "");
                }
            });
            writers.add(t);
            t.start();
        }
        for (Thread t : writers) {
            t.join();
        }
        for (String name : List.of("a", "b", "c")) {
            await("the last state of " + name)
                    .atMost(DEADLINE)
                    .until(() -> portsOf(sink.inner.events(), name).contains(n));
            List<Integer> ports = portsOf(sink.inner.events(), name);
            for (int i = 1; i < ports.size(); i++) {
                assertThat(ports.get(i))
                        .as("states of %s in publish order: %s", name, ports)
                        .isGreaterThan(ports.get(i - 1));
            }
        }
    }

    @Test
    void anOutageKeepsTheLatestStateAndEndsWithARepublish() {
        RecordingSink sink = new RecordingSink();
        sink.failing(true);
        AtomicInteger republishes = new AtomicInteger();
        publisher = new Publisher(
                        pending,
                        sink,
                        () -> {
                            republishes.incrementAndGet();
                            feed.republish();
                        },
                        FAST)
                .start();
        feed.settings(ClusterSettings.DEFAULT);
        feed.upsert(service("ns", "web", 80), "1");
        feed.upsert(service("ns", "db", 5432), "2");
        feed.sync(ObjectKind.SERVICE);
        await("a failed send").atMost(DEADLINE).until(() -> publisher.failedSends() > 0);
        assertThat(publisher.available()).isFalse();
        // Changes during the outage: conflated into the pending queue.
        feed.upsert(service("ns", "web", 8080), "3");
        feed.delete(ObjectKind.SERVICE, "ns/db", "4");
        feed.sync(ObjectKind.SERVICE);
        assertThat(sink.events()).isEmpty();

        sink.failing(false);
        await("the end of the outage").atMost(DEADLINE).until(() -> publisher.recoveries() == 1);
        sink.await(
                "the republished state",
                ev -> Events.described(ev).stream()
                                .filter(d -> d.startsWith("sync"))
                                .count()
                        >= 2);
        assertThat(publisher.available()).isTrue();
        assertThat(republishes).hasValue(1);
        // First the queued latest states (web:8080, the delete, the marker), then the republish.
        assertThat(Events.described(sink.events()))
                .containsExactly(
                        "settings [IPV4]",
                        "upsert Service ns/web",
                        "delete Service ns/db",
                        "sync Service [ns/web]",
                        "settings [IPV4]",
                        "upsert Service ns/web",
                        "sync Service [ns/web]");
        assertThat(portsOf(sink.events(), "web")).containsExactly(8080, 8080);
        assertThat(portsOf(sink.events(), "db")).isEmpty(); // its old state was superseded by the delete
    }

    @Test
    void aSinkThatThrowsIsAnOutageNotACrash() {
        AtomicInteger calls = new AtomicInteger();
        RecordingSink good = new RecordingSink();
        EventSink sink = new EventSink() {
            @Override
            public Delivery send(List<ClusterEvent> events) {
                if (calls.incrementAndGet() <= 3) {
                    throw new IllegalStateException("bug in a sink");
                }
                return good.send(events);
            }

            @Override
            public void close() {}
        };
        publisher = new Publisher(pending, sink, () -> {}, FAST).start();
        feed.upsert(service("ns", "web", 80), "1");
        good.await("the event, after three crashing sends", ev -> ev.size() == 1);
        assertThat(publisher.failedSends()).isEqualTo(3);
    }

    @Test
    void closeDrainsTheQueueThenClosesTheSink() {
        RecordingSink sink = new RecordingSink();
        publisher = new Publisher(pending, sink, () -> {}, FAST);
        for (int i = 0; i < 50; i++) {
            feed.upsert(service("ns", "s" + i, 80), "");
        }
        publisher.start();
        publisher.close(Duration.ofSeconds(30));
        assertThat(sink.events()).hasSize(50);
        assertThat(sink.closed()).isTrue();
        assertThat(publisher.published()).isEqualTo(50);
        publisher = null;
    }
}
