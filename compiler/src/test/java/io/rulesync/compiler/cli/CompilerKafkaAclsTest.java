package io.rulesync.compiler.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.compiler.testing.SecuredKafka;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.OperatorActionStore;
import io.rulesync.store.RecordedAction;
import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The real compiler, as {@code rulesync compiler --kafka-config FILE} runs it, on Kafka secured as deploy/README.md
 * sets it up: user {@code compiler}, and only the ACLs of that file (read from it). It creates its topics, reads the
 * watcher's events in its group, stores versions, publishes their deltas, carries out an operator's rollback (which
 * its outbox relay writes to the events topic).
 */
@RequiresPostgres
@RequiresKafka
class CompilerKafkaAclsTest {
    private static final String CLUSTER = "shop";
    private static final Topics TOPICS = Topics.DEFAULT;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void theCompilerWorksAsUserCompilerUnderTheDocumentedAcls() throws Exception {
        try (SecuredKafka kafka = SecuredKafka.start(dir);
                TestDatabase db = TestDatabase.create()) {
            try (ConfigurableApplicationContext compiler = kafka.startCompiler(db)) {
                try (Admin admin = kafka.broker().admin()) {
                    Set<String> mine = Set.of(TOPICS.events(), TOPICS.deltas(), TOPICS.deadLetters(), TOPICS.resyncs());
                    await("the compiler to create its topics")
                            .atMost(WAIT)
                            .until(() -> admin.listTopics()
                                    .names()
                                    .get(10, TimeUnit.SECONDS)
                                    .containsAll(mine));
                }
                CompilerStores store = compiler.getBean(CompilerStores.class);

                // The watcher's events, in its transaction, as user watcher: a version with the endpoint, then another.
                try (KafkaProducer<String, String> watcher = kafka.watcher(CLUSTER)) {
                    SecuredKafka.publish(
                            watcher,
                            CLUSTER,
                            new ClusterEvent.SettingsChanged(CLUSTER, ClusterSettings.DEFAULT, Fixtures.T),
                            up(Fixtures.node("n1", "10.1.0.1")),
                            up(Fixtures.service("web", "10.96.0.10")),
                            up(Fixtures.slice("web", "n1", "10.244.0.1")));
                    await("a version with the endpoint")
                            .atMost(WAIT)
                            .until(() -> runs(store, store.history().head(CLUSTER), "10.244.0.1:8080"));
                    long first = store.history().head(CLUSTER);
                    SecuredKafka.publish(watcher, CLUSTER, up(Fixtures.slice("web", "n1", "10.244.0.1", "10.244.0.2")));
                    await("the next version")
                            .atMost(WAIT)
                            .until(() -> store.history().head(CLUSTER) == first + 1);
                    // The outbox relay deletes a row once Kafka acknowledged it: the deltas were written.
                    await("the deltas published")
                            .atMost(WAIT)
                            .until(() -> store.outbox().pending(10).isEmpty());

                    // A rollback, recorded as the api records it; the relay carries it to the events topic.
                    OperatorActionStore actions = new OperatorActionStore(db.dataSource());
                    long id = actions.request(
                            CLUSTER, first, "otto", "second endpoint is broken", Instant.now(), TOPICS.events());
                    await("the rollback carried out")
                            .atMost(WAIT)
                            .until(() -> actions.find(id).map(a -> !a.pending()).orElse(false));
                    RecordedAction done = actions.find(id).orElseThrow();
                    assertThat(done.status()).as(done.outcome()).isEqualTo("done");
                    assertThat(done.resultVersion()).isEqualTo(first + 2);
                    assertThat(runs(store, first + 2, "10.244.0.2:8080")).isFalse();
                }
            }
        }
    }

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(CLUSTER, yaml);
    }

    private static boolean runs(CompilerStores store, long version, String endpoint) {
        return version >= 1
                && store.history()
                        .rules(CLUSTER, version)
                        .ruleSet("n1", IpFamily.IPV4)
                        .map(r -> r.render().contains(endpoint))
                        .orElse(false);
    }
}
