package io.rulesync.compiler.runtime;

import static io.rulesync.compiler.runtime.ShopCluster.CLUSTER;
import static io.rulesync.compiler.runtime.ShopCluster.runs;
import static io.rulesync.compiler.runtime.ShopCluster.up;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.PartitionWriters;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two compilers on one database, as operators make them: a second deployment with another consumer group, and a
 * member that froze and woke after Kafka gave its partitions away. Only one writes; the other says so in one ERROR
 * line and a metric, writes nothing, does not rebuild in a loop, and takes over once the writer is gone.
 */
@RequiresPostgres
@RequiresKafka
@ExtendWith(
        OutputCaptureExtension
                .class) // the log as printed: each compiler's Spring Boot start resets logback's appenders
class OneWriterTest {
    /** Short, so that the test sees a takeover; the idle check, which retries a waiting partition, as often. */
    private static final Map<String, Object> QUICK =
            Map.of("rulesync.compiler.writer-lease", "2s", "rulesync.compiler.log-check-interval", "500ms");

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
    private ShopCluster shop;

    @BeforeEach
    void shop() {
        shop = new ShopCluster(topics.events());
    }

    @AfterEach
    void close() {
        shop.close();
    }

    @Test
    void aSecondGroupStandsByLoudlyWritesNothingAndTakesOverWhenTheFirstStops(CapturedOutput log) throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            ConfigurableApplicationContext first = TestCompiler.start(db, topics, run, QUICK);
            CompilerStores store = CompilerStores.on(db.dataSource());
            shop.start();
            await("the first compiler's version")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> runs(store, "10.244.0.1:8080"));

            Map<String, Object> otherGroup = new java.util.HashMap<>(QUICK);
            otherGroup.put("rulesync.compiler.group", "other-" + run);
            try (ConfigurableApplicationContext second = TestCompiler.start(db, topics, run, otherGroup)) {
                String secondWriter = second.getBean(EventsListener.class).writer();
                MeterRegistry meters = second.getBean(MeterRegistry.class);
                await("the second compiler standing by")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> meters.get("rulesync.compiler.partitions.standing.by")
                                        .gauge()
                                        .value()
                                == 2);
                assertThat(errors(log, secondWriter))
                        .singleElement()
                        .asString()
                        .contains("events partition(s) [0, 1] of " + topics.events() + ": written by compiler "
                                + first.getBean(EventsListener.class).writer() + " of consumer group 'compiler-" + run
                                + "'")
                        .contains("Two compiler deployments share this database");

                // Edits while both run: stored once, by the first; the second neither writes nor rebuilds.
                long head = store.history().head(CLUSTER);
                for (int i = 2; i <= 6; i++) {
                    shop.send(up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0." + i)));
                    int n = i;
                    await("edit " + i)
                            .atMost(Duration.ofSeconds(30))
                            .until(() -> runs(store, "10.244.0." + n + ":8080"));
                }
                Thread.sleep(
                        1500); // deliberate: a lease's worth of time for a wrong write or rebuild by the second to show
                assertThat(db.count("cluster_event"))
                        .as("every event stored once")
                        .isEqualTo(9);
                assertThat(store.history().head(CLUSTER)).isEqualTo(head + 5);
                assertThat(lines(log)).noneMatch(m -> m.contains("another instance moved on"));
                assertThat(errors(log, secondWriter)).hasSize(1);

                // The first stops (a deployment removed): the second takes its partitions and goes on from where it
                // stopped.
                first.close();
                shop.send(up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.7")));
                await("the edit stored by the second")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> runs(store, "10.244.0.7:8080"));
                assertThat(store.history().head(CLUSTER)).isEqualTo(head + 6);
                assertThat(db.count("cluster_event"))
                        .as("nothing the first stored was stored again")
                        .isEqualTo(10);
                assertThat(meters.get("rulesync.compiler.partitions.standing.by")
                                .gauge()
                                .value())
                        .isZero();
                assertThat(lines(log)).anyMatch(m -> m.contains("took it over from compiler "));
            }
        }
    }

    @Test
    void aWriterWhosePartitionWasTakenWhileItWasSilentStopsWritingAndSaysSo(CapturedOutput log) throws Exception {
        try (TestDatabase db = TestDatabase.create();
                ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run, QUICK)) {
            CompilerStores store = compiler.getBean(CompilerStores.class);
            String writer = compiler.getBean(EventsListener.class).writer();
            MeterRegistry meters = compiler.getBean(MeterRegistry.class);
            shop.start();
            await("a version").atMost(Duration.ofSeconds(60)).until(() -> runs(store, "10.244.0.1:8080"));
            long head = store.history().head(CLUSTER);
            long events = db.count("cluster_event");

            // What a frozen member finds when it wakes: Kafka gave its partitions to another member of its group, which
            // claimed them (here, that member is this test, claiming as Kafka's assignment lets it).
            PartitionWriters writers = new PartitionWriters(db.dataSource());
            for (int partition = 0; partition < 2; partition++) {
                assertThat(writers.claim(
                                topics.events(),
                                partition,
                                "compiler-" + run,
                                "the-new-member",
                                Duration.ofSeconds(2),
                                true))
                        .isInstanceOf(PartitionWriters.Outcome.Granted.class);
            }
            shop.send(up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
            await("the stale writer fenced")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> meters.get("rulesync.compiler.writer.fenced")
                                    .counter()
                                    .count()
                            >= 1);
            assertThat(errors(log, writer))
                    .singleElement()
                    .asString()
                    .contains("another compiler took it while this one (" + writer + ") was not heard from")
                    .contains("compiler the-new-member of consumer group 'compiler-" + run + "'");
            assertThat(store.history().head(CLUSTER))
                    .as("nothing written by the fenced writer")
                    .isEqualTo(head);
            assertThat(db.count("cluster_event")).isEqualTo(events);
            assertThat(lines(log)).noneMatch(m -> m.contains("another instance moved on"));

            // The new member never writes (it is the test): silent past the lease, its partitions return to this
            // compiler.
            await("the edit stored once the new member fell silent")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> runs(store, "10.244.0.2:8080"));
            assertThat(store.history().head(CLUSTER)).isEqualTo(head + 1);
            assertThat(db.count("cluster_event")).isEqualTo(events + 1);
        }
    }

    private static List<String> lines(CapturedOutput log) {
        return log.getAll().lines().toList();
    }

    /** The compilers' ERROR lines about the compiler named {@code writer}. */
    private static List<String> errors(CapturedOutput log, String writer) {
        return lines(log).stream()
                .filter(l -> l.contains(" ERROR ") && l.contains("EventsListener") && l.contains("(" + writer))
                .toList();
    }
}
