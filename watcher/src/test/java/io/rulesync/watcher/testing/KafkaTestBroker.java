package io.rulesync.watcher.testing;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.EventParts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * One Kafka broker for the whole test JVM (it takes seconds to start), one topic per test: a
 * Testcontainers broker where a Docker engine runs, else an in-process KRaft broker.
 * {@code -Drulesync.test.infrastructure=local|containers} forces the choice.
 */
public final class KafkaTestBroker {
    private static String bootstrap;
    private static final AtomicInteger topics = new AtomicInteger();

    /** A record as consumed: key, partition, and the decoded event. */
    public record Received(String key, int partition, ClusterEvent event) {}

    private KafkaTestBroker() {}

    public static synchronized String bootstrap() {
        if (bootstrap == null) {
            if (useContainers()) {
                KafkaContainer k = new KafkaContainer("apache/kafka:4.1.0");
                k.start();
                bootstrap = k.getBootstrapServers();
            } else {
                EmbeddedKafkaKraftBroker b = new EmbeddedKafkaKraftBroker(1, 1);
                // One broker: the transaction log (the watcher's producers are transactional) must fit on it.
                b.brokerProperty("transaction.state.log.replication.factor", "1");
                b.brokerProperty("transaction.state.log.min.isr", "1");
                b.brokerProperty("transaction.state.log.num.partitions", "1");
                b.afterPropertiesSet();
                Runtime.getRuntime().addShutdownHook(new Thread(b::destroy));
                bootstrap = b.getBrokersAsString();
            }
        }
        return bootstrap;
    }

    private static boolean useContainers() {
        String forced = System.getProperty("rulesync.test.infrastructure", "");
        if (!forced.isEmpty()) {
            return forced.equals("containers");
        }
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** A new topic with two partitions (so that keying by cluster matters). */
    public static String newTopic(String prefix) {
        String name = prefix + "-" + topics.incrementAndGet();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(name, 2, (short) 1))).all().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("cannot create topic " + name, e);
        }
        return name;
    }

    /** Reads {@code topic} from the start until {@code done} holds for everything read (or fails after 30 s). */
    public static List<Received> readUntil(String topic, Predicate<List<Received>> done) {
        List<Received> out = new ArrayList<>();
        Map<String, List<EventParts.Part>> pending = new HashMap<>();
        read(
                topic,
                r -> receive(topic, r, pending, out),
                c -> done.test(out),
                () -> "; read so far:\n"
                        + Events.describe(out.stream().map(Received::event).toList()));
        return out;
    }

    /**
     * Everything committed to {@code topic} so far: read until each partition's position reaches its end (the last
     * stable offset), which counts transaction markers that a count of records would miss.
     */
    public static List<Received> readToEnd(String topic) {
        List<Received> out = new ArrayList<>();
        Map<String, List<EventParts.Part>> pending = new HashMap<>();
        read(topic, r -> receive(topic, r, pending, out), atEnd(topic), () -> " to its end");
        return out;
    }

    /** Every value committed to {@code topic} so far, as sent (parts of large events as they are). */
    public static List<String> valuesToEnd(String topic) {
        List<String> out = new ArrayList<>();
        read(topic, r -> out.add(r.value()), atEnd(topic), () -> " to its end");
        return out;
    }

    /** Done once every partition's position has reached the end it had when reading began. */
    private static Predicate<KafkaConsumer<String, String>> atEnd(String topic) {
        Map<TopicPartition, Long> end = new HashMap<>();
        return c -> {
            if (end.isEmpty()) {
                end.putAll(c.endOffsets(c.assignment()));
            }
            return end.entrySet().stream().allMatch(e -> c.position(e.getKey()) >= e.getValue());
        };
    }

    /**
     * Reads {@code topic}'s committed records from the start as the compiler does (read_committed, every partition,
     * no group), handing each to {@code each}, until {@code done}; fails after 30 s saying {@code what} it read.
     */
    private static void read(
            String topic,
            Consumer<ConsumerRecord<String, String>> each,
            Predicate<KafkaConsumer<String, String>> done,
            Supplier<String> what) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"); // assigned partitions, no group
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // as the compiler reads
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition()))
                    .toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!done.test(c)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("timed out reading " + topic + what.get());
                }
                c.poll(Duration.ofMillis(200)).forEach(each);
            }
        }
    }

    /** Decodes one record as the compiler would, putting the parts of a large event back together first. */
    private static void receive(
            String topic,
            ConsumerRecord<String, String> r,
            Map<String, List<EventParts.Part>> parts,
            List<Received> out) {
        String value = r.value();
        Optional<EventParts.Part> part = EventParts.read(value);
        if (part.isPresent()) {
            List<EventParts.Part> got = parts.computeIfAbsent(r.key(), k -> new ArrayList<>());
            got.add(part.get());
            if (got.size() < part.get().parts()) {
                return;
            }
            value = EventParts.join(got);
            parts.remove(r.key());
        }
        EventCodec.Decoded d = EventCodec.decode(value);
        if (!(d instanceof EventCodec.Decoded.Valid v)) {
            throw new AssertionError("unreadable event on " + topic + ": " + d + " in " + r.value());
        }
        out.add(new Received(r.key(), r.partition(), v.event()));
    }

    public static List<ClusterEvent> events(List<Received> received) {
        return received.stream().map(Received::event).toList();
    }
}
