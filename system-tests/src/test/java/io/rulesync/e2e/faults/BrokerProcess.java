package io.rulesync.e2e.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A Kafka broker (KRaft, broker and controller in one) as a process of its own, on a fixed port and log directory, so
 * that a fault harness can stop it (SIGTERM) or kill it (SIGKILL) and start it again with the same port and data, as an
 * operator's restart or a crash would. It runs Kafka's own {@code kafka.Kafka} from the harness's class path, the
 * same broker the tests embed. Its output goes to {@code target/faults-broker.log}.
 */
final class BrokerProcess implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final Path config;
    private Process process;

    private BrokerProcess(Path dir, int port, Path config) {
        this.dir = dir;
        this.port = port;
        this.config = config;
    }

    /** Formats a new log directory and starts the broker on it. */
    static BrokerProcess start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("rulesync-faults-kafka-");
        int port = RulesyncProcess.freePort();
        int controller = RulesyncProcess.freePort();
        Path config = dir.resolve("server.properties");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "process.roles=broker,controller",
                        "node.id=1",
                        "controller.quorum.voters=1@127.0.0.1:" + controller,
                        "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller,
                        "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                        "controller.listener.names=CONTROLLER",
                        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                        "inter.broker.listener.name=PLAINTEXT",
                        "log.dirs=" + dir.resolve("logs"),
                        "offsets.topic.replication.factor=1",
                        "transaction.state.log.replication.factor=1",
                        "transaction.state.log.min.isr=1",
                        "group.initial.rebalance.delay.ms=0",
                        "num.partitions=1",
                        ""));
        BrokerProcess b = new BrokerProcess(dir, port, config);
        String clusterId = org.apache.kafka.common.Uuid.randomUuid().toString();
        Process format = b.java("kafka.tools.StorageTool", "format", "-t", clusterId, "-c", config.toString())
                .start();
        if (format.waitFor() != 0) {
            throw new IllegalStateException(
                    "formatting the broker's log directory failed (see target/faults-broker.log)");
        }
        b.start(Duration.ofSeconds(60));
        return b;
    }

    String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** Starts the broker on its port and log directory, and waits until it listens. */
    void start(Duration timeout) throws IOException, InterruptedException {
        process = java("kafka.Kafka", config.toString()).start();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "the broker exited with " + process.exitValue() + " (see target/faults-broker.log)");
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException e) {
                Thread.sleep(200);
            }
        }
        throw new IllegalStateException("the broker did not listen on " + port + " within " + timeout);
    }

    /** SIGTERM: a controlled shutdown, as an operator's restart. */
    void stop() throws InterruptedException {
        process.destroy();
        process.waitFor();
    }

    /** SIGKILL: a crash. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    private ProcessBuilder java(String main, String... args) {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx512m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                main));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        Path.of("target", "faults-broker.log").toFile()));
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            kill();
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
