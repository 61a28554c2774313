package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.testing.needs.RequiresKafka;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

@RequiresKafka
class EmbeddedKafkaTest {
    private static final String EVENTS = "rulesync.cluster-events";
    private static final String DELTAS = "rulesync.rule-deltas";
    private static final String DLT = "rulesync.cluster-events.dlt";

    @Test
    void createsTheTopicsCarriesARecordAndDeletesItsDataOnClose() throws Exception {
        EmbeddedKafka kafka = EmbeddedKafka.start(3, EVENTS, DELTAS, DLT);
        try {
            assertThat(kafka.bootstrapServers()).startsWith("127.0.0.1:");
            assertThat(kafka.topics()).containsExactly(EVENTS, DELTAS, DLT);
            assertThat(kafka.dataDirectory()).isDirectory();

            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                Map<String, TopicDescription> topics = admin.describeTopics(List.of(EVENTS, DELTAS, DLT))
                        .allTopicNames()
                        .get();
                assertThat(topics.values())
                        .allSatisfy(t -> assertThat(t.partitions()).hasSize(3));
            }

            try (KafkaProducer<String, String> producer = producer(kafka)) {
                producer.send(new ProducerRecord<>(DELTAS, "node-a", "delta-1")).get();
            }
            ConsumerRecord<String, String> record = consumeOne(kafka, DELTAS);
            assertThat(record.key()).isEqualTo("node-a");
            assertThat(record.value()).isEqualTo("delta-1");
        } finally {
            closeFromTwoThreadsAtOnce(kafka);
        }
        assertThat(kafka.dataDirectory()).doesNotExist();
        kafka.close(); // idempotent
    }

    @Test
    void twoBrokersRunSideBySideInOneJvm() throws Exception {
        try (EmbeddedKafka first = EmbeddedKafka.start(1, EVENTS);
                EmbeddedKafka second = EmbeddedKafka.start(1, EVENTS)) {
            assertThat(first.bootstrapServers()).isNotEqualTo(second.bootstrapServers());
            assertThat(first.dataDirectory()).isNotEqualTo(second.dataDirectory());

            try (KafkaProducer<String, String> producer = producer(second)) {
                producer.send(new ProducerRecord<>(EVENTS, "k", "only-in-second"))
                        .get();
            }
            try (KafkaProducer<String, String> producer = producer(first)) {
                producer.send(new ProducerRecord<>(EVENTS, "k", "only-in-first"))
                        .get();
            }
            assertThat(consumeOne(first, EVENTS).value()).isEqualTo("only-in-first");
            assertThat(consumeOne(second, EVENTS).value()).isEqualTo("only-in-second");
        }
    }

    @Test
    void listensOnLoopbackOnlyAndChoosesNewPortsWhenOneIsTaken() throws Exception {
        List<Integer> handedOut = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger calls = new AtomicInteger();
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            EmbeddedKafka.PortSource ports = () -> {
                int[] free = freePorts();
                if (calls.getAndIncrement() == 0) {
                    free[0] = squatter.getLocalPort(); // the broker port is taken on the first attempt
                }
                handedOut.add(free[0]);
                handedOut.add(free[1]);
                return free;
            };
            System.out.println("EmbeddedKafkaTest: port " + squatter.getLocalPort() + " is taken on purpose;"
                    + " the broker's ERROR lines about binding to it are expected");
            try (EmbeddedKafka kafka = EmbeddedKafka.start(1, List.of(EVENTS), ports)) {
                assertThat(calls).hasValue(2);
                int brokerPort = handedOut.get(2);
                int controllerPort = handedOut.get(3);
                assertThat(kafka.bootstrapServers()).isEqualTo("127.0.0.1:" + brokerPort);

                List<InetAddress> others = nonLoopbackAddresses();
                System.out.println("EmbeddedKafkaTest: checking that ports " + brokerPort + " and " + controllerPort
                        + " refuse connections on " + others);
                for (InetAddress address : others) {
                    assertRefused(address, brokerPort);
                    assertRefused(address, controllerPort);
                }
            }
        }
    }

    @Test
    void rejectsZeroPartitions() {
        assertThatThrownBy(() -> EmbeddedKafka.start(0, EVENTS)).isInstanceOf(IllegalArgumentException.class);
    }

    // ---------------------------------------------------------------------------------------------

    private static KafkaProducer<String, String> producer(EmbeddedKafka kafka) {
        return new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        kafka.bootstrapServers(),
                        ProducerConfig.ACKS_CONFIG,
                        "all"),
                new StringSerializer(),
                new StringSerializer());
    }

    private static ConsumerRecord<String, String> consumeOne(EmbeddedKafka kafka, String topic) {
        Map<String, Object> props = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "embedded-kafka-test",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    return record;
                }
            }
        }
        throw new AssertionError("no record arrived on " + topic);
    }

    private static void closeFromTwoThreadsAtOnce(EmbeddedKafka kafka) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> a = pool.submit(kafka::close);
            Future<?> b = pool.submit(kafka::close);
            a.get();
            b.get();
        } finally {
            pool.shutdownNow();
        }
    }

    private static int[] freePorts() throws IOException {
        try (ServerSocket a = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
                ServerSocket b = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            return new int[] {a.getLocalPort(), b.getLocalPort()};
        }
    }

    private static List<InetAddress> nonLoopbackAddresses() throws SocketException {
        List<InetAddress> result = new ArrayList<>();
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nif.isUp() || nif.isLoopback()) {
                continue;
            }
            for (InetAddress address : Collections.list(nif.getInetAddresses())) {
                if (!address.isLoopbackAddress()
                        && !address.isLinkLocalAddress()
                        && !(address instanceof Inet6Address && ((Inet6Address) address).getScopeId() != 0)) {
                    result.add(address);
                }
            }
        }
        return result;
    }

    private static void assertRefused(InetAddress address, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), 2000);
            throw new AssertionError("port " + port + " accepted a connection on " + address.getHostAddress());
        } catch (IOException notListening) {
            // Refused, or unanswered where a host firewall drops traffic to its own addresses: either way nothing is
            // served
            // there. Only an accepted connection is the failure.
        }
    }
}
