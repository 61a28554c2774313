package io.rulesync.watcher.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventParts;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.testing.Events;
import io.rulesync.watcher.testing.KafkaTestBroker;
import io.rulesync.watcher.testing.ModelObjects;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink on the real broker. One writer per cluster: a second watcher of a cluster fences the first,
 * whose later events of that cluster are dropped, never committed, so the compiler (reading committed
 * records) never sees the two interleave; other clusters of the fenced watcher are not affected. And no
 * size limit: an event above the message limit goes as parts.
 */
@RequiresKafka
class KafkaEventSinkTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final Instant T = Instant.parse("2026-12-02T00:00:00Z");

    @TempDir
    Path dir;

    private static Properties config() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestBroker.bootstrap());
        return p;
    }

    private static ClusterEvent web(String cluster, int port) {
        return new ObjectUpserted(cluster, ModelObjects.service("shop", "web", port), "1", T);
    }

    private static List<Integer> ports(List<ClusterEvent> events, String cluster) {
        return events.stream()
                .filter(e ->
                        e.cluster().equals(cluster) && e instanceof ObjectUpserted u && u.object() instanceof Service)
                .map(e ->
                        ((Service) ((ObjectUpserted) e).object()).ports().get(0).port())
                .toList();
    }

    @Test
    void aSecondSinkOfAClusterFencesTheFirstForThatClusterOnly() {
        String topic = KafkaTestBroker.newTopic("fence");
        try (KafkaEventSink older = KafkaEventSink.create(config(), topic);
                KafkaEventSink newer = KafkaEventSink.create(config(), topic)) {
            assertThat(older.send(List.of(web("demo", 80), web("other", 80))).allDelivered())
                    .isTrue();
            assertThat(newer.send(List.of(web("demo", 81))).allDelivered()).isTrue();

            EventSink.Delivery d = older.send(List.of(web("demo", 79), web("other", 82)));
            assertThat(d.failed().isEmpty()).isTrue();
            assertThat(d.dropped().stream().boxed().toList()).containsExactly(0);
            assertThat(older.fencedClusters()).containsExactly("demo");
            // From then on the older sink drops the cluster at once, without asking the broker.
            assertThat(older.send(List.of(web("demo", 78))).dropped().cardinality())
                    .isEqualTo(1);
            assertThat(newer.send(List.of(web("demo", 83))).allDelivered()).isTrue();

            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic,
                    r -> ports(KafkaTestBroker.events(r), "demo").contains(83)
                            && ports(KafkaTestBroker.events(r), "other").contains(82)));
            assertThat(ports(got, "demo")).containsExactly(80, 81, 83);
            assertThat(ports(got, "other")).containsExactly(80, 82);
        }
    }

    @Test
    void aFencedSinkTakesItsClusterBackAfterItsWaitAndWaitsLongerEachTime() throws Exception {
        String topic = KafkaTestBroker.newTopic("retake");
        List<String> retaken = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (KafkaEventSink older = KafkaEventSink.create(config(), topic, Duration.ofSeconds(1));
                KafkaEventSink newer = KafkaEventSink.create(config(), topic, Duration.ofSeconds(1))) {
            older.onRetaken(retaken::add);
            assertThat(older.send(List.of(web("demo", 80))).allDelivered()).isTrue();
            assertThat(newer.send(List.of(web("demo", 81))).allDelivered()).isTrue();
            assertThat(older.send(List.of(web("demo", 79))).dropped().cardinality())
                    .isEqualTo(1);

            // The newer one stops publishing; past the wait, the older takes the cluster back, and the newer is fenced.
            Thread.sleep(1100); // deliberate: the sink's wait is by the clock
            EventSink.Delivery retake = older.send(List.of(web("demo", 82)));
            assertThat(retake.allDelivered())
                    .as("the retake's delivery; its error: %s", retake.error())
                    .isTrue();
            assertThat(retaken).containsExactly("demo");
            assertThat(older.fencedClusters()).isEmpty();
            assertThat(newer.send(List.of(web("demo", 83))).dropped().cardinality())
                    .isEqualTo(1);
            assertThat(newer.fencedClusters()).containsExactly("demo");

            // Two live watchers of one cluster alternate, each waiting twice as long as before once fenced again.
            Thread.sleep(1100);
            assertThat(newer.send(List.of(web("demo", 84))).allDelivered())
                    .as("the newer's first wait: 1 s")
                    .isTrue();
            assertThat(older.send(List.of(web("demo", 85))).dropped().cardinality())
                    .as("fenced again")
                    .isEqualTo(1);
            Thread.sleep(1100);
            assertThat(older.send(List.of(web("demo", 86))).dropped().cardinality())
                    .as("its second wait: 2 s")
                    .isEqualTo(1);
            Thread.sleep(1000);
            assertThat(older.send(List.of(web("demo", 87))).allDelivered()).isTrue();
            assertThat(retaken).containsExactly("demo", "demo");
            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic, r -> ports(KafkaTestBroker.events(r), "demo").contains(87)));
            assertThat(ports(got, "demo")).containsExactly(80, 81, 82, 84, 87);
        }
    }

    /**
     * A commit whose acknowledgement is lost (a broker restarting answers late): the transaction did commit, but the
     * producer says it timed out. Sending the events again in a new transaction stored them twice (faults/outages found
     * it); the sink commits the same transaction again instead, as Kafka prescribes. The producer is the real one on the
     * real broker; only the first commit's answer is replaced by the timeout the client would throw.
     */
    @Test
    void aCommitThatTimedOutIsCommittedAgainNotSentAgain() {
        String topic = KafkaTestBroker.newTopic("lost-ack");
        Properties p = KafkaEventSink.producerConfig(config());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "lost-ack-" + topic);
        int[] commits = {0};
        try (KafkaEventSink sink =
                new KafkaEventSink(cluster -> lostFirstCommitAnswer(new KafkaProducer<>(p), commits), true, topic)) {
            EventSink.Delivery d = sink.send(List.of(web("demo", 80), web("demo", 81)));
            assertThat(d.allDelivered()).isTrue();
            assertThat(commits[0]).isEqualTo(2);
        }
        assertThat(KafkaTestBroker.events(KafkaTestBroker.readToEnd(topic)))
                .containsExactly(web("demo", 80), web("demo", 81));
    }

    /**
     * {@code real}, whose first commit reaches the broker and then throws the client's timeout; a commit after that is
     * answered as the broker answers a retried commit of a committed transaction: done.
     */
    @SuppressWarnings("unchecked")
    private static Producer<String, String> lostFirstCommitAnswer(Producer<String, String> real, int[] commits) {
        return (Producer<String, String>) Proxy.newProxyInstance(
                Producer.class.getClassLoader(), new Class<?>[] {Producer.class}, (proxy, method, args) -> {
                    if (method.getName().equals("commitTransaction")) {
                        if (++commits[0] == 1) {
                            real.commitTransaction();
                            throw new TimeoutException("Timeout expired after 10000ms while awaiting EndTxn(COMMIT)");
                        }
                        return null;
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** A sync marker of a cluster of 50,000 Services (about 1.5 MB, above the broker's 1 MiB limit) goes as parts, in order. */
    @Test
    void anEventAboveTheMessageLimitGoesAsPartsInsteadOfBeingDropped() {
        String topic = KafkaTestBroker.newTopic("large");
        Set<String> keys = new TreeSet<>();
        for (int i = 0; i < 50_000; i++) {
            keys.add("namespace-" + (i % 50) + "/service-" + i);
        }
        ClusterEvent marker = new ClusterEvent.SyncMarker("demo", ObjectKind.SERVICE, keys, T);
        try (KafkaEventSink sink = KafkaEventSink.create(config(), topic)) {
            EventSink.Delivery d = sink.send(List.of(web("demo", 80), marker, web("demo", 81)));
            assertThat(d.allDelivered()).isTrue();
        }
        List<String> values = KafkaTestBroker.valuesToEnd(topic);
        List<EventParts.Part> parts =
                values.stream().flatMap(v -> EventParts.read(v).stream()).toList();
        assertThat(parts).hasSizeGreaterThanOrEqualTo(2);
        assertThat(values).hasSize(2 + parts.size()).allMatch(v -> v.length() <= KafkaEventSink.MAX_MESSAGE_CHARS);
        List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readToEnd(topic));
        assertThat(got).containsExactly(web("demo", 80), marker, web("demo", 81));
    }

    @Test
    void twoWatchersOfOneClusterAtOnceDoNotInterleave() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo"));
        Path web = folder.resolve("web.yaml");
        writeWeb(web, 80);
        String topic = KafkaTestBroker.newTopic("fence-watchers");
        FleetConfig fleet = demoFleet(folder);
        try (Watcher older = Watcher.start(fleet, config(), topic)) {
            KafkaTestBroker.readUntil(
                    topic, r -> ports(KafkaTestBroker.events(r), "demo").contains(80));
            // A rolling update: the new instance starts while the old one still runs.
            try (Watcher newer = Watcher.start(fleet, config(), topic)) {
                KafkaTestBroker.readUntil(
                        topic, r -> ports(KafkaTestBroker.events(r), "demo").size() >= 2);
                writeWeb(web, 81);
                await("both watchers saw the edit").atMost(DEADLINE).until(() -> seen(older, 81) && seen(newer, 81));
                await("the older one's edit was dropped")
                        .atMost(DEADLINE)
                        .until(() -> older.stats().dropped() > 0);
                // The older one's 81 was dropped, never sent: once the newer one's is there, the log is complete.
                List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                        topic, r -> ports(KafkaTestBroker.events(r), "demo").contains(81)));
                assertThat(ports(got, "demo")).as(Events.describe(got)).containsExactly(80, 80, 81);
                assertThat(newer.stats().dropped()).isZero();
            }
        }
    }

    @Test
    void aFencedWatcherTakesItsClusterBackOnceTheNewerOneStopped() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("demo"));
        Path web = folder.resolve("web.yaml");
        writeWeb(web, 80);
        String topic = KafkaTestBroker.newTopic("retake-watchers");
        FleetConfig fleet = demoFleet(folder);
        try (Watcher older = Watcher.start(fleet, config(), topic, Watcher.Options.defaults(), Duration.ofSeconds(2))) {
            KafkaTestBroker.readUntil(
                    topic, r -> ports(KafkaTestBroker.events(r), "demo").contains(80));
            try (Watcher newer = Watcher.start(fleet, config(), topic)) {
                KafkaTestBroker.readUntil(
                        topic, r -> ports(KafkaTestBroker.events(r), "demo").size() >= 2);
                writeWeb(web, 81);
                await("the older one's edit was dropped")
                        .atMost(DEADLINE)
                        .until(() -> older.stats().dropped() > 0);
            }
            // The newer watcher is gone. The older one's next event, once its wait is over, takes the cluster back, and
            // its
            // whole state goes again: the edit made while it was fenced too.
            Thread.sleep(2100); // deliberate: the wait is by the clock
            writeWeb(web, 82);
            List<ClusterEvent> got = KafkaTestBroker.events(KafkaTestBroker.readUntil(
                    topic,
                    r -> ports(KafkaTestBroker.events(r), "demo").contains(82)
                            && KafkaTestBroker.events(r).stream()
                                    .anyMatch(e -> e instanceof ClusterEvent.StateDigest)));
            assertThat(ports(got, "demo")).as(Events.describe(got)).containsSubsequence(80, 81, 82);
            assertThat(older.stats().dropped()).isPositive();
        }
    }

    /** Service shop/web of cluster "demo", on {@code port}, as its manifest file. */
    private static void writeWeb(Path web, int port) throws IOException {
        Files.writeString(
                web,
                "kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{port: "
                        + port + "}]}");
    }

    /** A fleet of cluster "demo", watched in {@code folder}. */
    private static FleetConfig demoFleet(Path folder) {
        return FleetConfig.of(
                new ClusterSpec("demo", new ClusterSource.ManifestFolder(folder), ClusterSettings.DEFAULT));
    }

    private static boolean seen(Watcher w, int port) {
        return w.feed("demo")
                .get(ObjectKind.SERVICE, "shop/web")
                .map(s -> ((Service) s).ports().get(0).port() == port)
                .orElse(false);
    }
}
