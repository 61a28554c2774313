package io.rulesync.compiler.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.topic.Topics;
import io.rulesync.store.ProblemStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The events topic is a way in too: a crafted event carrying an address the API server refuses
 * becomes a dead letter with the field-level reason, never a rule; a ClusterIP claimed twice is
 * logged once per change and counted; and an event a stricter compiler now refuses, stored by an
 * older one, does not stop a rebuild.
 */
@RequiresPostgres
class SpecialAddressEventsTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);

    /** Special addresses of both families, and the IPv4-mapped form, as the probe sent them. */
    static final List<String> SPECIAL_V4 = List.of("127.0.0.1", "169.254.169.254", "0.0.0.0", "224.0.0.1");

    static final List<String> SPECIAL_V6 = List.of("::1", "fe80::1", "::", "ff02::1", "::ffff:127.0.0.1");
    static final List<String> CONTROLS_V4 = List.of("10.0.0.1", "8.8.8.8");
    static final List<String> CONTROLS_V6 = List.of("2001:db8::1");

    /** A field of an event's object: a valid object with PLACEHOLDER where the address goes, and the field's path. */
    record Field(String path, String ipv4Yaml, String ipv6Yaml) {}

    static final List<Field> FIELDS = List.of(
            new Field("endpoints[0].addresses[0]", slice("IPv4", "10.244.0.99"), slice("IPv6", "\"fd00:244::99\"")),
            new Field(
                    "spec.externalIPs[0]",
                    service("10.96.0.10", "externalIPs: [203.0.113.99], "),
                    service("\"fd00:96::10\"", "externalIPs: [\"2001:db8::99\"], ")),
            new Field("spec.clusterIPs[0]", service("10.96.0.99", ""), service("\"fd00:96::99\"", "")));

    static String slice(String type, String address) {
        return "kind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {name: web-1, namespace: shop, labels: "
                + "{kubernetes.io/service-name: web}}\naddressType: " + type + "\nports: [{name: http, port: 8080}]\n"
                + "endpoints: [{addresses: [" + address + "], nodeName: n1}]\n";
    }

    static String service(String clusterIP, String extra) {
        return "kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: " + clusterIP + ", " + extra
                + "ports: [{name: http, port: 80}]}\n";
    }

    /** The wire form of a valid event, with its placeholder address replaced: what someone writing the topic could send. */
    static String crafted(Field f, boolean ipv6, String address) {
        String yaml = ipv6 ? f.ipv6Yaml() : f.ipv4Yaml();
        String placeholder =
                List.of("10.244.0.99", "fd00:244::99", "203.0.113.99", "2001:db8::99", "10.96.0.99", "fd00:96::99")
                        .stream()
                        .filter(yaml::contains)
                        .findFirst()
                        .orElseThrow();
        return ScriptedEvents.up("a", yaml).replace(placeholder, address);
    }

    private static PartitionProcessor processor(CompilerStores store, PartitionProcessor.Observer observer) {
        return new PartitionProcessor(
                store.partition(),
                Topics.DEFAULT,
                "compiler",
                0,
                CLOCK,
                PartitionProcessor.Faults.NONE,
                PartitionProcessor.VersionListener.NONE,
                observer,
                Duration.ofMinutes(1));
    }

    @Test
    void aCraftedEventWithASpecialAddressIsADeadLetterNamingTheFieldAndNeverARule() {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store, PartitionProcessor.Observer.NONE);
            List<PartitionProcessor.Record> batch = new ArrayList<>();
            batch.add(new PartitionProcessor.Record(0, "a", ScriptedEvents.node("a", "n1", "10.1.0.1")));
            List<String> expected = new ArrayList<>();
            List<String> controls = new ArrayList<>();
            for (Field f : FIELDS) {
                for (boolean ipv6 : new boolean[] {false, true}) {
                    for (String address : ipv6 ? SPECIAL_V6 : SPECIAL_V4) {
                        batch.add(new PartitionProcessor.Record(batch.size(), "a", crafted(f, ipv6, address)));
                        String why = address.startsWith("::ffff:")
                                ? "is an IPv4-mapped IPv6 address"
                                : "is "
                                        + io.rulesync.model.cluster.IpAddress.parse(address)
                                                .specialRange()
                                                .orElseThrow()
                                                .label();
                        expected.add(
                                (f.path().startsWith("endpoints") ? "EndpointSlice shop/web-1: " : "Service shop/web: ")
                                        + f.path() + ": " + address + " " + why + " (the API server refuses it)");
                    }
                    for (String address : ipv6 ? CONTROLS_V6 : CONTROLS_V4) {
                        batch.add(new PartitionProcessor.Record(batch.size(), "a", crafted(f, ipv6, address)));
                        controls.add(address);
                    }
                }
            }
            assertThat(p.process(batch)).isEqualTo(PartitionProcessor.Outcome.DONE);

            List<String> reasons = store.outbox().pending(1000).stream()
                    .filter(m -> m.topic().equals(Topics.DEFAULT.deadLetters()))
                    .map(m -> (String)
                            ((Map<?, ?>) new Load(LoadSettings.builder().build()).loadFromString(m.payload()))
                                    .get("reason"))
                    .toList();
            assertThat(reasons).containsExactlyElementsOf(expected);
            assertThat(db.count("dead_letter")).isEqualTo(expected.size());
            // The controls went through: the last of them is what the cluster holds now.
            assertThat(db.count("cluster_event")).isEqualTo(1 + controls.size());
            String rules = store.history()
                    .rules("a", store.history().head("a"))
                    .ruleSet("n1", IpFamily.IPV4)
                    .orElseThrow()
                    .render();
            for (String special : SPECIAL_V4) {
                assertThat(rules).doesNotContain(" " + special + " ", special + ":");
            }
        }
    }

    @Test
    void aClusterIpClaimedTwiceIsLoggedOncePerChangeAndCounted() {
        Logger logger = (Logger) LoggerFactory.getLogger(PartitionProcessor.class);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        logger.addAppender(logs);
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            CompilerMetrics metrics = new CompilerMetrics(registry);
            PartitionProcessor p = processor(store, metrics);
            p.process(List.of(
                    new PartitionProcessor.Record(0, "a", ScriptedEvents.node("a", "n1", "10.1.0.1")),
                    new PartitionProcessor.Record(1, "a", ScriptedEvents.service("a", "web", "10.96.0.10")),
                    new PartitionProcessor.Record(2, "a", ScriptedEvents.service("a", "api", "10.96.0.10"))));
            // Unrelated events do not repeat it.
            p.process(List.of(new PartitionProcessor.Record(3, "a", ScriptedEvents.slice("a", "web", "10.244.0.1"))));
            p.process(List.of(new PartitionProcessor.Record(4, "a", ScriptedEvents.slice("a", "web", "10.244.0.2"))));
            assertThat(conflictLines(logs))
                    .containsExactly("WARN cluster a: Service shop/web: spec.clusterIPs[0]: 10.96.0.10 is"
                            + " also the ClusterIP of Service shop/api (spec.clusterIPs[0]), which sorts first and keeps it; the API server"
                            + " allocates a ClusterIP to one Service only, so this Service is left out of the rules");
            assertThat(registry.get("rulesync.cluster.problems")
                            .tag("cluster", "a")
                            .gauge()
                            .value())
                    .isEqualTo(1.0);
            assertThat(store.history()
                            .rules("a", store.history().head("a"))
                            .ruleSet("n1", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .doesNotContain("shop/web")
                    .contains("shop/api:http");
            // Stored beside the watcher's reports, where the api's problems endpoint reads them.
            ProblemStore problems = new ProblemStore(db.dataSource());
            assertThat(problems.problems("a")).singleElement().satisfies(sp -> {
                assertThat(sp.source()).isEqualTo(PartitionProcessor.ADMISSION_SOURCE);
                assertThat(sp.object()).isEqualTo("Service shop/web");
                assertThat(sp.field()).isEqualTo("spec.clusterIPs[0]");
            });

            // api moves away: resolved once, and web's rules come back.
            p.process(List.of(new PartitionProcessor.Record(5, "a", ScriptedEvents.service("a", "api", "10.96.0.11"))));
            assertThat(conflictLines(logs))
                    .hasSize(2)
                    .last()
                    .asString()
                    .startsWith("INFO cluster a: resolved: Service shop/web");
            assertThat(registry.get("rulesync.cluster.problems")
                            .tag("cluster", "a")
                            .gauge()
                            .value())
                    .isZero();
            assertThat(store.history()
                            .rules("a", store.history().head("a"))
                            .ruleSet("n1", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .contains("--to-destination 10.244.0.2:8080");
            assertThat(problems.problems("a")).isEmpty();
        } finally {
            logger.detachAppender(logs);
        }
    }

    private static List<String> conflictLines(ListAppender<ILoggingEvent> logs) {
        return logs.list.stream()
                .filter(e -> e.getFormattedMessage().contains("Service shop/web"))
                .map(e -> e.getLevel() + " " + e.getFormattedMessage())
                .toList();
    }

    /** An event stored before the decoder refused special addresses does not stop the rebuild; its object is left out. */
    @Test
    void aStoredEventThisCompilerRefusesIsLeftOutOfTheRebuild() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            CompilerStores store = CompilerStores.on(db.dataSource());
            PartitionProcessor p = processor(store, PartitionProcessor.Observer.NONE);
            p.process(List.of(
                    new PartitionProcessor.Record(0, "a", ScriptedEvents.node("a", "n1", "10.1.0.1")),
                    new PartitionProcessor.Record(1, "a", ScriptedEvents.service("a", "web", "10.96.0.1")),
                    new PartitionProcessor.Record(2, "a", ScriptedEvents.slice("a", "web", "10.244.0.7"))));
            // What an older compiler would have stored: the same slice pointing at the metadata service.
            try (Connection c = db.dataSource().getConnection();
                    PreparedStatement ps = c.prepareStatement(
                            "UPDATE cluster_event SET payload = replace(payload, ?, ?) WHERE strpos(payload, ?) > 0")) {
                ps.setString(1, "10.244.0.7");
                ps.setString(2, "169.254.169.254");
                ps.setString(3, "10.244.0.7");
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            PartitionProcessor restarted = processor(store, PartitionProcessor.Observer.NONE);
            assertThat(restarted.heads().get("a").view().state().endpointSlices())
                    .isEmpty();
            assertThat(restarted.heads().get("a").view().state().services()).hasSize(1);
            // The next event publishes rules without the refused slice.
            restarted.process(
                    List.of(new PartitionProcessor.Record(3, "a", ScriptedEvents.node("a", "n2", "10.1.0.2"))));
            assertThat(store.history()
                            .rules("a", store.history().head("a"))
                            .ruleSet("n1", IpFamily.IPV4)
                            .orElseThrow()
                            .render())
                    .doesNotContain("10.244.0.7")
                    .contains("shop/web:http has no endpoints");
        }
    }

    static {
        // Fixtures' objects must stay valid: a typo in a template would make every case a dead letter.
        for (Field f : FIELDS) {
            Fixtures.object(f.ipv4Yaml());
            Fixtures.object(f.ipv6Yaml());
        }
    }
}
