package io.rulesync.compiler.cli;

import io.rulesync.compiler.runtime.CompilerApplication;
import io.rulesync.model.files.KafkaClientConfig;
import io.rulesync.store.DatabaseOptions;
import io.rulesync.store.DurationConverter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code rulesync compiler}: the compiler service against a Kafka cluster and a PostgreSQL database. */
@Command(
        name = "compiler",
        description =
                "Consume cluster events from Kafka, store versioned rule snapshots in PostgreSQL and publish deltas.",
        mixinStandardHelpOptions = true,
        sortOptions = false)
public final class CompilerCommand implements Callable<Integer> {
    @Option(names = "--kafka", required = true, paramLabel = "HOST:PORT", description = "Kafka bootstrap servers.")
    private String kafka;

    @Option(
            names = "--kafka-config",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_KAFKA_CONFIG}",
            description =
                    "Kafka client settings (TLS, SASL) in Kafka's client.properties format. Default: $RULESYNC_KAFKA_CONFIG.")
    private String kafkaConfig;

    @Option(
            names = "--port",
            defaultValue = "8081",
            description = "HTTP port of health probes (/actuator/health/liveness|readiness) and Prometheus metrics "
                    + "(/actuator/prometheus); 0: any free one. Default: ${DEFAULT-VALUE}.")
    private int port;

    @Mixin
    private DatabaseOptions db;

    @Option(
            names = "--group",
            defaultValue = "rulesync-compiler",
            description = "Consumer group; instances in one group share the clusters. Default: ${DEFAULT-VALUE}.")
    private String group;

    @Option(
            names = "--partitions",
            defaultValue = "6",
            description = "Partitions of the topics it creates. Default: ${DEFAULT-VALUE}.")
    private int partitions;

    @Option(
            names = "--coalesce-window",
            defaultValue = "100ms",
            converter = DurationConverter.class,
            description = "How long a poll waits for a burst to accumulate. Default: ${DEFAULT-VALUE}.")
    private Duration coalesceWindow;

    @Option(
            names = "--action-timeout",
            defaultValue = "5m",
            converter = DurationConverter.class,
            description = {
                "How long a rollback or resume may stay pending before it expires (its request was lost, or no "
                        + "compiler ran); give the api the same. Default: ${DEFAULT-VALUE}."
            })
    private Duration actionTimeout;

    @Option(
            names = "--checkpoint-every",
            defaultValue = "10000",
            description = {
                "Stored events of a cluster between its checkpoints: a compiler taking over a partition replays at "
                        + "most this many events per cluster after the newest checkpoint. Default: ${DEFAULT-VALUE}."
            })
    private int checkpointEvery;

    @Option(
            names = "--retain-for",
            defaultValue = "30d",
            converter = DurationConverter.class,
            description = {
                "Retention: keep each cluster's versions younger than this (0: no age limit). Versions a node runs, "
                        + "a pin or a pending rollback needs are kept whatever the limits. Default: ${DEFAULT-VALUE}."
            })
    private Duration retainFor;

    @Option(
            names = "--retain-versions",
            defaultValue = "0",
            description = {
                "Retention: keep each cluster's newest N versions (0: no count limit). With both limits, a version "
                        + "either keeps is kept; with neither (--retain-for 0), everything is. Default: ${DEFAULT-VALUE}."
            })
    private int retainVersions;

    @Option(
            names = "--retention-interval",
            defaultValue = "5m",
            converter = DurationConverter.class,
            description = "How often retention removes what the limits no longer keep. Default: ${DEFAULT-VALUE}.")
    private Duration retentionInterval;

    @Option(
            names = "--writer-lease",
            defaultValue = "30s",
            converter = DurationConverter.class,
            description = {
                "One compiler writes a partition at a time. A compiler of another consumer group (a second "
                        + "deployment on the same database) writes nothing and stands by until the partition's writer has been silent "
                        + "this long. Default: ${DEFAULT-VALUE}."
            })
    private Duration writerLease;

    /** Starts the compiler and returns once it runs; closing the context stops it. */
    public ConfigurableApplicationContext start() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.putAll(db.springProperties());
        props.put("spring.kafka.bootstrap-servers", kafka);
        KafkaClientConfig.load(kafkaConfig).forEach((k, v) -> props.put("spring.kafka.properties." + k, v));
        props.put("server.port", port);
        props.put("rulesync.compiler.group", group);
        props.put("rulesync.compiler.partitions", partitions);
        props.put("rulesync.compiler.coalesce-window", coalesceWindow.toMillis() + "ms");
        props.put("rulesync.compiler.action-timeout", actionTimeout.toMillis() + "ms");
        props.put("rulesync.compiler.checkpoint-every", checkpointEvery);
        props.put("rulesync.compiler.retain-for", retainFor.toMillis() + "ms");
        props.put("rulesync.compiler.retain-versions", retainVersions);
        props.put("rulesync.compiler.retention-interval", retentionInterval.toMillis() + "ms");
        props.put("rulesync.compiler.writer-lease", writerLease.toMillis() + "ms");
        props.put("spring.main.banner-mode", "off");
        return new SpringApplicationBuilder(CompilerApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(props)
                .run();
    }

    @Override
    public Integer call() throws InterruptedException {
        ConfigurableApplicationContext app = start();
        CountDownLatch closed = new CountDownLatch(1);
        app.addApplicationListener(e -> {
            if (e instanceof org.springframework.context.event.ContextClosedEvent) {
                closed.countDown();
            }
        });
        closed.await(); // until SIGTERM/SIGINT closes the context through Spring's shutdown hook
        return 0;
    }
}
