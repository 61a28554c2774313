package io.rulesync.demo;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * A real, single-node Kafka broker in KRaft mode (broker and controller in one node), running in
 * this JVM for {@code rulesync demo}.
 *
 * <p>This is Kafka's own production server ({@link KafkaRaftServer}, what {@code kafka-server-start}
 * runs), formatted and configured here the way {@code kafka-storage format} and a
 * {@code server.properties} would:
 * <ul>
 *   <li>both listeners are bound to 127.0.0.1 only, on free ports chosen at start;</li>
 *   <li>data lives in a fresh temporary directory that {@link #close()} deletes;</li>
 *   <li>the broker's loggers are turned down to WARN or ERROR ({@link QuietLogging#KAFKA_BROKER});</li>
 *   <li>replication factors are 1, so internal topics (consumer offsets, transactions) work on one
 *       node.</li>
 * </ul>
 *
 * <p>spring-kafka-test's {@code EmbeddedKafkaKraftBroker} was not used: its Kafka test kit
 * pre-binds every listener on the wildcard address (all interfaces), whatever the listener
 * configuration says.
 *
 * <p>{@link #close()} is idempotent, thread-safe and may be called from a shutdown hook; no hook is
 * registered here, so that the caller can stop the applications that use the broker first.
 */
public final class EmbeddedKafka implements AutoCloseable {
    private static final String LOOPBACK = "127.0.0.1";
    private static final int START_ATTEMPTS = 3;
    private static final Duration TOPIC_TIMEOUT = Duration.ofSeconds(30);
    /** Distinct node ids keep two brokers in one JVM from fighting over the same JMX names. */
    private static final AtomicInteger NEXT_NODE_ID = new AtomicInteger(1);

    private final KafkaRaftServer server;
    private final Path dataDirectory;
    private final String bootstrapServers;
    private final List<String> topics;
    private boolean closed;

    private EmbeddedKafka(KafkaRaftServer server, Path dataDirectory, String bootstrapServers, List<String> topics) {
        this.server = server;
        this.dataDirectory = dataDirectory;
        this.bootstrapServers = bootstrapServers;
        this.topics = topics;
    }

    /**
     * Starts a broker and creates the given topics (replication factor 1, {@code partitions}
     * partitions each). Returns once the broker accepts clients and every topic is visible in its
     * metadata.
     *
     * @throws IllegalStateException if the broker does not start or a topic cannot be created
     */
    public static EmbeddedKafka start(int partitions, String... topics) {
        return start(partitions, List.of(topics), EmbeddedKafka::twoFreeLoopbackPorts);
    }

    /** As {@link #start(int, String...)}, with the source of listener ports replaceable for tests. */
    static EmbeddedKafka start(int partitions, List<String> topics, PortSource ports) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be at least 1, got " + partitions);
        }
        List<String> topicList = List.copyOf(new LinkedHashSet<>(topics));
        QuietLogging.apply(QuietLogging.KAFKA_BROKER);
        RuntimeException failure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            try {
                return startOnce(partitions, topicList, ports.twoFreePorts());
            } catch (PortTakenException e) {
                // Another process took a port between our choice and the broker's bind: choose again.
                if (failure == null) {
                    failure = new IllegalStateException(
                            "Kafka did not start: its listener ports were taken " + START_ATTEMPTS + " times in a row",
                            e);
                } else {
                    failure.addSuppressed(e);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Kafka did not start: " + e.getMessage(), e);
            }
        }
        throw failure;
    }

    /** {@code host:port} for the clients' {@code bootstrap.servers}, e.g. {@code 127.0.0.1:41234}. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** The topics created at start, in the order given. */
    public List<String> topics() {
        return topics;
    }

    /** The broker's temporary data directory; gone after {@link #close()}. */
    Path dataDirectory() {
        return dataDirectory;
    }

    /**
     * Stops the broker and deletes its data. Idempotent; concurrent callers wait until the first
     * one has finished, so a shutdown hook and the main thread may both call it.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.shutdown();
            server.awaitShutdown();
        } finally {
            TempDirectories.delete(dataDirectory);
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static EmbeddedKafka startOnce(int partitions, List<String> topics, int[] ports) throws IOException {
        int brokerPort = ports[0];
        int controllerPort = ports[1];
        int nodeId = NEXT_NODE_ID.getAndIncrement();
        Path dataDirectory = Files.createTempDirectory("rulesync-kafka-");
        KafkaRaftServer server = null;
        try {
            String logDir = dataDirectory.resolve("log").toString();
            format(nodeId, logDir);
            KafkaConfig config =
                    new KafkaConfig(brokerConfig(nodeId, partitions, logDir, brokerPort, controllerPort), false);
            server = new KafkaRaftServer(config, Time.SYSTEM);
            server.startup(); // returns once the broker is registered and unfenced
            String bootstrapServers = LOOPBACK + ":" + brokerPort;
            createTopics(bootstrapServers, topics, partitions);
            return new EmbeddedKafka(server, dataDirectory, bootstrapServers, topics);
        } catch (RuntimeException | IOException e) {
            stopQuietly(server, e);
            TempDirectories.deleteAfter(e, dataDirectory);
            if (hasCause(e, BindException.class)) {
                throw new PortTakenException(e);
            }
            throw e;
        }
    }

    private static Map<String, Object> brokerConfig(
            int nodeId, int partitions, String logDir, int brokerPort, int controllerPort) {
        Map<String, Object> props = new HashMap<>();
        props.put("process.roles", "broker,controller");
        props.put("node.id", Integer.toString(nodeId));
        props.put("controller.quorum.voters", nodeId + "@" + LOOPBACK + ":" + controllerPort);
        props.put(
                "listeners",
                "PLAINTEXT://" + LOOPBACK + ":" + brokerPort + ",CONTROLLER://" + LOOPBACK + ":" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://" + LOOPBACK + ":" + brokerPort);
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("log.dirs", logDir);
        props.put("num.partitions", Integer.toString(partitions));
        props.put("default.replication.factor", "1");
        props.put("min.insync.replicas", "1");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "1");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "1");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        // Fail instead of hanging forever if the node never becomes ready.
        props.put("server.max.startup.time.ms", Long.toString(TimeUnit.SECONDS.toMillis(60)));
        return props;
    }

    /** Formats the data directory as {@code kafka-storage format} does for a static controller quorum. */
    private static void format(int nodeId, String logDir) throws IOException {
        try {
            new Formatter()
                    .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                    .setNodeId(nodeId)
                    .setClusterId(Uuid.randomUuid().toString())
                    .setDirectories(List.of(logDir))
                    .setMetadataLogDirectory(logDir)
                    .setControllerListenerName("CONTROLLER")
                    .run();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("Could not format the Kafka data directory " + logDir, e);
        }
    }

    private static void createTopics(String bootstrapServers, List<String> topics, int partitions) {
        if (topics.isEmpty()) {
            return;
        }
        Map<String, Object> props = new HashMap<>();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "rulesync-demo-topics");
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> newTopics = new ArrayList<>();
            for (String topic : topics) {
                newTopics.add(new NewTopic(topic, partitions, (short) 1));
            }
            try {
                admin.createTopics(newTopics).all().get(TOPIC_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("Could not create the Kafka topics " + topics, e.getCause());
                }
            }
            awaitTopicsVisible(admin, Set.copyOf(topics));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while creating the Kafka topics " + topics, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("Timed out creating the Kafka topics " + topics, e);
        }
    }

    /** The controller has committed the topics; wait until the broker's metadata shows them too. */
    private static void awaitTopicsVisible(Admin admin, Set<String> topics)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + TOPIC_TIMEOUT.toNanos();
        while (true) {
            try {
                admin.describeTopics(topics).allTopicNames().get(TOPIC_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw new IllegalStateException("Could not describe the Kafka topics " + topics, e.getCause());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("topics " + topics + " not visible after " + TOPIC_TIMEOUT);
            }
            Thread.sleep(50);
        }
    }

    private static void stopQuietly(KafkaRaftServer server, Exception failure) {
        if (server == null) {
            return;
        }
        try {
            server.shutdown();
            server.awaitShutdown();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private static int[] twoFreeLoopbackPorts() throws IOException {
        InetAddress loopback = InetAddress.getByName(LOOPBACK);
        try (ServerSocket first = new ServerSocket();
                ServerSocket second = new ServerSocket()) {
            first.bind(new InetSocketAddress(loopback, 0));
            second.bind(new InetSocketAddress(loopback, 0));
            return new int[] {first.getLocalPort(), second.getLocalPort()};
        }
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Where the broker's two listener ports come from: {@code {broker, controller}}. */
    @FunctionalInterface
    interface PortSource {
        int[] twoFreePorts() throws IOException;
    }

    private static final class PortTakenException extends RuntimeException {
        PortTakenException(Throwable cause) {
            super(cause.getMessage(), cause);
        }
    }
}
