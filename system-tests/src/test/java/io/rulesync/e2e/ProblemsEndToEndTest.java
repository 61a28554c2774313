package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rulesync.api.ApiApplication;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.runtime.PartitionProcessor;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.watcher.Watcher;
import io.rulesync.watcher.fleet.ClusterSource;
import io.rulesync.watcher.fleet.ClusterSpec;
import io.rulesync.watcher.fleet.FleetConfig;
import io.rulesync.watcher.publish.ClusterFeed;
import io.rulesync.watcher.publish.KafkaEventSink;
import io.rulesync.watcher.resync.KafkaResyncRequests;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Refused objects where operators look, through every real part: a manifest folder watched by the real
 * watcher, the real broker, the real compiler and PostgreSQL, and the real api over HTTP. A broken
 * file shows in the cluster's problems with its reason; later reads do not report it again; fixing it
 * clears it. A record the compiler cannot decode shows there as a dead letter. A key with a newline is
 * logged escaped, by the watcher and by the compiler.
 */
@EndToEnd
@RequiresPostgres
@RequiresKafka
class ProblemsEndToEndTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ApiTokens.Issued VIEWER = ApiTokens.issue("vera", Role.VIEWER);
    private static final String DB = """
            kind: Service
            metadata: {name: db, namespace: shop}
            spec: {clusterIP: 10.96.0.54, ports: [{port: PORT}]}
            """;

    @TempDir
    Path dir;

    private String api;

    @Test
    void aBrokenFileIsAProblemOnceUntilFixedAndAnUndecodableRecordADeadLetter() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
        Path web = dir.resolve("web.yaml");
        Path db = dir.resolve("db.yaml");
        Files.writeString(web, ShopManifest.web("{addresses: [10.244.0.11], nodeName: node-a}"));
        Files.writeString(db, DB.replace("PORT", "0"));
        Properties kafka = new Properties();
        kafka.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestInfrastructure.kafkaBootstrapServers());
        FleetConfig fleet =
                FleetConfig.of(new ClusterSpec("shop", new ClusterSource.ManifestFolder(dir), ClusterSettings.DEFAULT));
        PrometheusMeterRegistry watcherMetrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

        try (TestDatabase database = TestDatabase.create();
                ConfigurableApplicationContext compiler = TestCompiler.start(database, topics, run);
                ConfigurableApplicationContext apiApp = startApi(database);
                // After the Spring applications: starting one resets logback's configuration, appenders included.
                LogCapture log = new LogCapture(ClusterFeed.class, PartitionProcessor.class);
                Watcher watcher = Watcher.start(
                        fleet,
                        KafkaEventSink.create(kafka, topics.events()),
                        Watcher.Options.defaults().withResyncs(new KafkaResyncRequests(kafka, topics.resyncs())));
                KafkaProducer<String, String> producer =
                        PipelineBenchmark.producer(TestInfrastructure.kafkaBootstrapServers())) {
            watcher.bindMetrics(watcherMetrics);
            api = "http://127.0.0.1:" + apiApp.getEnvironment().getProperty("local.server.port");
            CompilerStores store = compiler.getBean(CompilerStores.class);

            // The broken file is a problem of the cluster, with the object, the field and the reason; the rest is
            // compiled.
            await("the broken file among the cluster's problems")
                    .atMost(DEADLINE)
                    .until(() -> problemCount() == 1);
            await("the first version").atMost(DEADLINE).until(() -> rules(store).contains("10.244.0.11:8080"));
            Map<?, ?> problem = (Map<?, ?>) problems().get(0);
            assertThat(map(problem))
                    .containsEntry("source", db.toString())
                    .containsEntry("location", db + " (document 1)")
                    .containsEntry("object", "Service shop/db")
                    .containsEntry("field", "spec.ports[0].port")
                    .containsEntry("reason", "0 is out of range (1-65535)");
            Object reportedAt = problem.get("reportedAt");
            assertThat(clusterEntry().get("refusedObjects")).isEqualTo(1);
            assertThat(watcherMetrics.scrape())
                    .contains(
                            "rulesync_watcher_refused_objects{cluster=\"shop\"} 1.0",
                            "rulesync_watcher_problem_reports_total{cluster=\"shop\"} 1.0");
            assertThat(compiler.getBean(PrometheusMeterRegistry.class).scrape())
                    .contains("rulesync_refused_objects{cluster=\"shop\"} 1.0");

            // Later reads (another file changes; the broken one is written again, unchanged) do not report it again.
            long version = store.history().head("shop");
            Files.writeString(db, DB.replace("PORT", "0") + "\n");
            Files.writeString(
                    web,
                    ShopManifest.web("{addresses: [10.244.0.11], nodeName: node-a}, "
                            + "{addresses: [10.244.0.12], nodeName: node-a}"));
            await("the edit of the other file")
                    .atMost(DEADLINE)
                    .until(() -> rules(store).contains("10.244.0.12:8080"));
            assertThat(store.history().head("shop")).isEqualTo(version + 1);
            assertThat(watcherMetrics.scrape())
                    .contains("rulesync_watcher_problem_reports_total{cluster=\"shop\"} 1.0");
            assertThat(eventTypes()).containsOnlyOnce("problems");
            assertThat(problems())
                    .singleElement()
                    .satisfies(p -> assertThat(map(p)).containsEntry("reportedAt", reportedAt));
            assertThat(log.lines()).filteredOn(l -> l.contains("is invalid")).hasSize(1);

            // Fixed: its problems are cleared, and its Service is compiled; no version came of the reports themselves.
            Files.writeString(db, DB.replace("PORT", "5432"));
            await("the problems cleared").atMost(DEADLINE).until(() -> problemCount() == 0);
            await("the fixed Service compiled")
                    .atMost(DEADLINE)
                    .until(() -> rules(store).contains("10.96.0.54"));
            assertThat(clusterEntry().get("refusedObjects")).isEqualTo(0);
            assertThat(watcherMetrics.scrape())
                    .contains(
                            "rulesync_watcher_refused_objects{cluster=\"shop\"} 0.0",
                            "rulesync_watcher_problem_reports_total{cluster=\"shop\"} 2.0");
            assertThat(store.history().head("shop")).isEqualTo(version + 2);

            // A record the compiler cannot decode: a dead letter of the cluster, with the reason, logged on one line.
            producer.send(new ProducerRecord<>(
                            topics.events(),
                            "shop",
                            "{\"v\":1,\"cluster\":\"shop\",\"type\":\"re\\nINFO forged\","
                                    + "\"observedAt\":\"2026-11-29T12:00:00Z\"}"))
                    .get();
            await("the dead letter among the cluster's problems")
                    .atMost(DEADLINE)
                    .until(() -> deadLetterCount() == 1);
            Map<?, ?> dead = (Map<?, ?>)
                    ((List<?>) body("/api/v1/clusters/shop/problems").get("deadLetters")).get(0);
            assertThat((String) dead.get("reason")).startsWith("type: 're\nINFO forged' is not upsert, delete,");
            assertThat(dead.get("topic")).isEqualTo(topics.events());
            await("the dead letter logged")
                    .atMost(DEADLINE)
                    .until(() -> log.text().contains("refused as dead letters"));

            // A key with a newline, in a file whose name has one: refused, and logged escaped on one line.
            Files.writeString(
                    dir.resolve("odd\nINFO forged.yaml"),
                    "kind: Service\nmetadata: {name: \"web\\nINFO forged\", "
                            + "namespace: shop}\nspec: {ports: [{port: 80}]}\n");
            await("the odd file among the problems").atMost(DEADLINE).until(() -> problemCount() == 1);
            assertThat(map(problems().get(0)))
                    .containsEntry("source", dir + "/odd\\x0aINFO forged.yaml")
                    .containsEntry("object", "Service shop/web\\x0aINFO forged");
            assertThat(log.text())
                    .contains(
                            "cluster shop: file " + dir + "/odd\\x0aINFO forged.yaml is invalid",
                            "Service shop/web\\x0aINFO forged: metadata.name: 'web\\x0aINFO forged' is not a DNS-1035 label",
                            "type: 're\\x0aINFO forged' is not upsert");
            assertThat(log.lines()).noneMatch(l -> l.startsWith("INFO forged"));
        }
    }

    private ConfigurableApplicationContext startApi(TestDatabase database) {
        Map<String, Object> props = new HashMap<>();
        props.put("server.port", 0);
        props.put("spring.datasource.url", database.url());
        props.put("spring.datasource.username", database.user());
        props.put("spring.datasource.password", database.password());
        props.put("spring.main.banner-mode", "off");
        props.put("rulesync.api.tokens", VIEWER.line());
        return new SpringApplicationBuilder(ApiApplication.class)
                .web(WebApplicationType.SERVLET)
                .properties(props)
                .run();
    }

    private static String rules(CompilerStores store) {
        long head = store.history().head("shop");
        return head == 0
                ? ""
                : store.history()
                        .rules("shop", head)
                        .ruleSet("node-a", IpFamily.IPV4)
                        .map(r -> r.render())
                        .orElse("");
    }

    private Map<?, ?> clusterEntry() throws Exception {
        return (Map<?, ?>) ((List<?>) body("/api/v1/clusters").get("clusters")).get(0);
    }

    private List<?> problems() throws Exception {
        return (List<?>) body("/api/v1/clusters/shop/problems").get("problems");
    }

    /** How many problems the api lists; -1 while it cannot say (the cluster not known yet). */
    private int problemCount() {
        try {
            return problems().size();
        } catch (Exception | AssertionError e) {
            return -1;
        }
    }

    private int deadLetterCount() {
        try {
            return ((List<?>) body("/api/v1/clusters/shop/problems").get("deadLetters")).size();
        } catch (Exception | AssertionError e) {
            return -1;
        }
    }

    private List<String> eventTypes() throws Exception {
        return ((List<?>) body("/api/v1/clusters/shop/events?limit=500").get("events"))
                .stream().map(e -> String.valueOf(((Map<?, ?>) e).get("type"))).toList();
    }

    private Map<?, ?> body(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(api + path))
                        .header("Authorization", "Bearer " + VIEWER.token())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return (Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(r.body());
    }

    /** What some loggers write while it is open, formatted as the console shows it ({@code LEVEL logger - message}). */
    private static final class LogCapture implements AutoCloseable {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        private final List<Logger> loggers;

        LogCapture(Class<?>... of) {
            Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(root.getLoggerContext());
            encoder.setPattern("%level %logger{0} - %msg%n");
            encoder.start();
            appender.setContext(root.getLoggerContext());
            appender.setEncoder(encoder);
            appender.setOutputStream(out);
            appender.start();
            loggers = java.util.Arrays.stream(of)
                    .map(c -> (Logger) LoggerFactory.getLogger(c))
                    .toList();
            loggers.forEach(l -> l.addAppender(appender));
        }

        String text() {
            return out.toString(StandardCharsets.UTF_8);
        }

        List<String> lines() {
            return text().lines().toList();
        }

        @Override
        public void close() {
            loggers.forEach(l -> l.detachAppender(appender));
            appender.stop();
        }
    }

    /** A JSON object, for assertions on its entries. */
    @SuppressWarnings("unchecked")
    private static Map<Object, Object> map(Object json) {
        return (Map<Object, Object>) json;
    }
}
