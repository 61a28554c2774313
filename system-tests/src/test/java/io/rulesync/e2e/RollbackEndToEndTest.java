package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.feed.Transport;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.compiler.bench.PipelineBenchmark;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.testing.TestCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.topic.Topics;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.tiers.EndToEnd;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import io.rulesync.testsupport.cluster.Fixtures;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Rollback and resume through every real part that runs here: events on the KRaft broker →
 * compiler → PostgreSQL → api (tokens, REST) → the request back through the outbox and the events
 * topic → compiler → deltas → a dry-run agent that applies and acknowledges → api.
 */
@EndToEnd
@RequiresPostgres
@RequiresKafka
class RollbackEndToEndTest {
    private static final String CLUSTER = "shop";
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final ApiTokens.Issued OPERATOR = ApiTokens.issue("otto", Role.OPERATOR);
    /** Node n1's own token: its acks go to the api, whatever carries its deltas. */
    private static final ApiTokens.Issued AGENT =
            ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1"));

    @TempDir
    Path dir;

    private String api;
    /** The operator's requests, once the api runs. */
    private ApiCalls operator;

    @Test
    void changesVersionsAcksRollbackAgentAppliesResume() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Topics topics = new Topics("events-" + run, "deltas-" + run, "dlt-" + run);
        List<AutoCloseable> close = new ArrayList<>();
        try (TestDatabase db = TestDatabase.create();
                KafkaProducer<String, String> producer =
                        PipelineBenchmark.producer(TestInfrastructure.kafkaBootstrapServers())) {
            try {
                run(db, producer, topics, run, close);
            } finally {
                // Everything that uses the database stops before the database is dropped.
                for (int i = close.size() - 1; i >= 0; i--) {
                    close.get(i).close();
                }
            }
        }
    }

    private void run(
            TestDatabase db,
            KafkaProducer<String, String> producer,
            Topics topics,
            String run,
            List<AutoCloseable> close)
            throws Exception {
        ConfigurableApplicationContext compiler = TestCompiler.start(db, topics, run);
        close.add(compiler::close);
        CompilerStores store = compiler.getBean(CompilerStores.class);
        ConfigurableApplicationContext apiApp =
                ApiCalls.startApi(db, topics.events(), List.of(OPERATOR.line(), AGENT.line()));
        close.add(apiApp::close);
        api = ApiCalls.baseUrl(apiApp);
        operator = new ApiCalls(api, OPERATOR.token());

        // Changes -> versions 1..3: one endpoint, two, three.
        send(
                producer,
                topics,
                EventCodec.encode(new SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T)),
                up(Fixtures.node("n1", "10.1.0.1")),
                up(Fixtures.service("web", "10.96.0.10")),
                up(Fixtures.slice("web", "n1", "10.244.0.1")));
        // The first events may arrive as more than one version: wait for the one with the endpoint.
        await("a version with the endpoint")
                .atMost(DEADLINE)
                .until(() -> store.history().head(CLUSTER) >= 1
                        && store.history()
                                .rules(CLUSTER, store.history().head(CLUSTER))
                                .ruleSet("n1", IpFamily.IPV4)
                                .map(r -> r.render().contains("10.244.0.1:8080"))
                                .orElse(false));
        long v1 = store.history().head(CLUSTER);
        send(producer, topics, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
        await("version 2").atMost(DEADLINE).until(() -> store.history().head(CLUSTER) == v1 + 1);
        send(producer, topics, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2", "10.244.0.3")));
        await("version 3").atMost(DEADLINE).until(() -> store.history().head(CLUSTER) == v1 + 2);
        long v3 = v1 + 2;

        // An agent applies the head and acknowledges it: deltas through Kafka here (EndToEndTest uses the api), acks to
        // the api.
        Path rules = Files.createDirectories(dir.resolve("rules"));
        AgentLoop agent = new AgentConfig(
                        CLUSTER,
                        "n1",
                        TestInfrastructure.kafkaBootstrapServers(),
                        Map.of(),
                        topics,
                        URI.create(api),
                        AGENT.token(),
                        List.of(IpFamily.IPV4),
                        rules,
                        null,
                        dir.resolve("state"),
                        Duration.ofSeconds(30),
                        50)
                .withTransport(Transport.KAFKA)
                .loop()
                .start();
        close.add(agent);
        awaitNode(v3);
        assertThat(Files.readString(rules.resolve("n1-ipv4.rules"))).contains("10.244.0.3:8080");

        // Roll back to version 1: a new version whose rules equal version 1's, published and applied.
        HttpResponse<String> back = operator.post(
                "/api/v1/clusters/shop/rollback",
                "{\"toVersion\": " + v1 + ", \"reason\": \"third endpoint is broken\"}");
        assertThat(back.statusCode()).as(back.body()).isEqualTo(200);
        Map<?, ?> action = ApiCalls.json(back.body());
        assertThat(action.get("status")).isEqualTo("done");
        long rolledBack = ((Number) action.get("version")).longValue();
        assertThat(rolledBack).isEqualTo(v3 + 1);
        assertThat(operator.get("/api/v1/clusters/shop/versions/" + rolledBack + "/rules?node=n1"))
                .isEqualTo(operator.get("/api/v1/clusters/shop/versions/" + v1 + "/rules?node=n1"));
        awaitNode(rolledBack);
        String applied = Files.readString(rules.resolve("n1-ipv4.rules"));
        assertThat(applied).contains("10.244.0.1:8080").doesNotContain("10.244.0.2:8080", "10.244.0.3:8080");
        assertThat(operator.get("/api/v1/clusters/shop/versions/" + rolledBack))
                .contains("\"action\":\"rollback\"", "\"actor\":\"otto\"", "\"reason\":\"third endpoint is broken\"");

        // Pinned: a watched change is recorded and compiled, but not published.
        send(producer, topics, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.4")));
        // Seven events were stored before it (settings, node, Service, three slices, the rollback); the wait used to
        // ask
        // for seven, which held at once, before the held change arrived.
        await("the held change recorded")
                .atMost(DEADLINE)
                .untilAsserted(() -> assertThat(store.events().events(CLUSTER, 0, null, null, null, null, 100).stream()
                                .map(e -> e.type() + " " + e.key())
                                .toList())
                        .hasSize(8)
                        .endsWith("rollback null", "upsert shop/web-1"));
        assertThat(store.history().head(CLUSTER)).isEqualTo(rolledBack);
        Map<?, ?> clusters = ApiCalls.json(operator.get("/api/v1/clusters"));
        Map<?, ?> pinned = (Map<?, ?>) ((Map<?, ?>) ((List<?>) clusters.get("clusters")).get(0)).get("pinned");
        assertThat(((Number) pinned.get("toVersion")).longValue()).isEqualTo(v1);
        assertThat(pinned.get("actor")).isEqualTo("otto");

        // Resume publishes the current state, with the held change.
        HttpResponse<String> resumed = operator.post("/api/v1/clusters/shop/resume", "{\"reason\": \"fixed\"}");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        long fresh = ((Number) ApiCalls.json(resumed.body()).get("version")).longValue();
        assertThat(fresh).isEqualTo(rolledBack + 1);
        awaitNode(fresh);
        assertThat(Files.readString(rules.resolve("n1-ipv4.rules")))
                .contains("10.244.0.4:8080")
                .doesNotContain("10.244.0.3:8080");
        assertThat(((Map<?, ?>) ((List<?>) ApiCalls.json(operator.get("/api/v1/clusters"))
                                        .get("clusters"))
                                .get(0))
                        .get("pinned"))
                .isNull();
        List<?> audit = (List<?>)
                ApiCalls.json(operator.get("/api/v1/audit?cluster=shop")).get("actions");
        assertThat(audit.stream()
                        .map(a -> String.valueOf(((Map<?, ?>) a).get("action")))
                        .toList())
                .containsExactly("resume", "rollback");
        assertThat(audit.stream()
                        .map(a -> String.valueOf(((Map<?, ?>) a).get("actor")))
                        .toList())
                .containsOnly("otto");

        // What Prometheus would scrape: from the compiler the events and versions of this run, from the api the acks.
        String metrics = compiler.getBean(PrometheusMeterRegistry.class).scrape();
        assertThat(metrics)
                .contains(
                        "rulesync_events_consumed_total",
                        "rulesync_compile_duration_seconds_count",
                        "rulesync_versions_produced_total{cluster=\"shop\"} " + fresh + ".0",
                        "rulesync_delta_fragments_count{cluster=\"shop\"}");
        assertThat(apiApp.getBean(PrometheusMeterRegistry.class).scrape())
                .contains(
                        "rulesync_agent_apply_duration_seconds_count{cluster=\"shop\",status=\"applied\"}",
                        "rulesync_network_programming_duration_seconds_bucket{cluster=\"shop\",le=\"+Inf\"}");
    }

    private static String up(String yaml) {
        return EventCodec.encode(Fixtures.upsert(CLUSTER, yaml));
    }

    private static void send(KafkaProducer<String, String> producer, Topics topics, String... events) throws Exception {
        for (String e : events) {
            producer.send(new ProducerRecord<>(topics.events(), CLUSTER, e)).get();
        }
    }

    /** Until the api says node n1 runs {@code version} and is converged. */
    private void awaitNode(long version) throws InterruptedException {
        await("n1 acknowledging version " + version).atMost(DEADLINE).until(() -> {
            try {
                List<?> nodes = (List<?>) ApiCalls.json(operator.get("/api/v1/clusters/shop/nodes"))
                        .get("nodes");
                return nodes.stream()
                        .map(n -> (Map<?, ?>) n)
                        .anyMatch(n -> n.get("node").equals("n1")
                                && n.get("state").equals("converged")
                                && ((Number) n.get("running")).longValue() == version);
            } catch (Exception e) {
                return false;
            }
        });
    }
}
