package io.rulesync.model.files;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Kafka client settings from a file in Kafka's own {@code client.properties} format (what
 * {@code kafka-console-producer --producer.config} reads): TLS ({@code security.protocol=SSL},
 * {@code ssl.truststore.location}, ...) and SASL ({@code sasl.mechanism}, {@code sasl.jaas.config}).
 * Secrets need not be in the file: Kafka's own config providers resolve references such as
 * {@code ${env:KAFKA_PASSWORD}} when the file says {@code config.providers=env} and
 * {@code config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider}.
 * Nothing of this is set in code: every role reads the same file. It lives in {@code model.files}, not
 * {@code model.topic}, because it reads a file (see ARCHITECTURE.md, "Purity").
 */
public final class KafkaClientConfig {
    private KafkaClientConfig() {}

    /** The file's settings, by name; empty for a null or blank path. */
    public static Map<String, String> load(String path) {
        Map<String, String> out = new TreeMap<>();
        if (path == null || path.isBlank()) {
            return out;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(Path.of(path), StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka client config " + path + ": " + e.getMessage(), e);
        }
        p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k)));
        return out;
    }
}
