package io.rulesync.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.AgentLoop;
import io.rulesync.agent.cli.AgentCommand;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.compiler.testing.SecuredKafka;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.NodeStatus;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.store.VersionHistory;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * An agent on {@code --transport kafka}, as user {@code agent} under the ACLs of deploy/README.md (read from it): its
 * real delta reader ({@code DeltaFeed}, no consumer group) gets the deltas the real compiler writes as {@code compiler};
 * its snapshots and acks go through the real api, the acks with the node's own token (a Kafka principal, shared by the
 * agents, could speak for any node). User {@code agent} may write no topic.
 */
@RequiresPostgres
@RequiresKafka
class KafkaTransportAclsTest {
    private static final String CLUSTER = "shop";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ApiTokens.Issued N1 =
            ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope(CLUSTER, "n1"));

    @TempDir
    Path dir;

    @Test
    void theAgentReadsDeltasAsUserAgentAndAcksToTheApi() throws Exception {
        try (SecuredKafka kafka = SecuredKafka.start(dir);
                TestDatabase db = TestDatabase.create()) {
            try (ConfigurableApplicationContext compiler = kafka.startCompiler(db);
                    ConfigurableApplicationContext api =
                            ApiCalls.startApi(db, Topics.DEFAULT.events(), List.of(N1.line()));
                    KafkaProducer<String, String> watcher = kafka.watcher(CLUSTER)) {
                VersionHistory history = new VersionHistory(db.dataSource());
                SecuredKafka.publish(
                        watcher,
                        CLUSTER,
                        new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                        up(Fixtures.node("n1", "10.1.0.1")),
                        up(Fixtures.service("web", "10.96.0.10")),
                        up(Fixtures.slice("web", "n1", "10.244.0.1")));
                await("a first version").atMost(WAIT).until(() -> history.head(CLUSTER) >= 1);

                Path rules = Files.createDirectories(dir.resolve("rules"));
                AgentConfig config = agentConfig(kafka, ApiCalls.baseUrl(api), rules);
                NodeStatusStore status = new NodeStatusStore(db.dataSource());
                try (AgentLoop agent = config.loop().start()) {
                    // The agent acks what it loaded once it reads the deltas; wait for that before changing anything.
                    await("the first ack recorded")
                            .atMost(WAIT)
                            .until(() -> status.nodeStatus(CLUSTER).stream()
                                    .map(NodeStatus::running)
                                    .toList()
                                    .equals(List.of(history.head(CLUSTER))));
                    assertThat(agent.died()).isNull();
                    double asked = snapshots(api);

                    SecuredKafka.publish(watcher, CLUSTER, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                    await("the agent to apply the delta")
                            .atMost(WAIT)
                            .until(() -> Files.readString(rules.resolve("n1-ipv4.rules"))
                                    .contains("10.244.0.2:8080"));
                    long head = history.head(CLUSTER);
                    await("its ack recorded")
                            .atMost(WAIT)
                            .until(() -> status.nodeStatus(CLUSTER).stream()
                                    .map(NodeStatus::running)
                                    .toList()
                                    .equals(List.of(head)));
                    assertThat(snapshots(api))
                            .as("the change came as a delta, not a snapshot")
                            .isEqualTo(asked);
                    assertThat(agent.died()).isNull();
                }

                // The agents' Kafka user writes nothing: not events, not deltas.
                // Not idempotent: that would be refused for the cluster first, and the topic's ACL is what is shown
                // here.
                try (KafkaProducer<String, String> agent =
                        kafka.producer("agent", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false")) {
                    for (String topic : List.of(Topics.DEFAULT.events(), Topics.DEFAULT.deltas())) {
                        assertThatThrownBy(() -> agent.send(new ProducerRecord<>(topic, CLUSTER, "{}"))
                                        .get(30, TimeUnit.SECONDS))
                                .hasCauseInstanceOf(TopicAuthorizationException.class);
                    }
                }
            }
        }
    }

    /**
     * {@code rulesync agent --transport kafka} with user agent's client.properties and node n1's token; a dry run writes
     * the rules to files.
     */
    private AgentConfig agentConfig(SecuredKafka kafka, String api, Path rules) throws Exception {
        Path token = Files.writeString(dir.resolve("n1.token"), N1.token());
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        AgentCommand command = new AgentCommand();
        new CommandLine(command)
                .parseArgs(
                        "--cluster",
                        CLUSTER,
                        "--node",
                        "n1",
                        "--transport",
                        "kafka",
                        "--kafka",
                        kafka.broker().bootstrap(),
                        "--kafka-config",
                        kafka.clientFile("agent").toString(),
                        "--api",
                        api,
                        "--api-token-file",
                        token.toString(),
                        "--ip-families",
                        "ipv4",
                        "--dry-run",
                        rules.toString(),
                        "--state-dir",
                        dir.resolve("state").toString(),
                        "--metrics-bind-address",
                        "off",
                        "--healthz-bind-address",
                        "off");
        return command.config();
    }

    /** Snapshot bodies the api sent (a 304, "you run it", is not one). */
    private static double snapshots(ConfigurableApplicationContext api) {
        return api.getBean(MeterRegistry.class).find("rulesync.snapshot.bytes").summaries().stream()
                .filter(m -> !"none".equals(m.getId().getTag("encoding")))
                .mapToDouble(m -> m.count())
                .sum();
    }

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(CLUSTER, yaml);
    }
}
