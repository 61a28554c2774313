package io.rulesync.api.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rulesync.api.acks.AckMetrics;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerMetrics;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.manifest.Problem;
import io.rulesync.store.EventLog;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The alerting rules shipped in {@code deploy/alerts} are valid, fire on the series they are meant for (their own
 * {@code promtool test rules} file), and name only metrics that rulesync's processes really expose.
 */
class AlertRulesTest {
    private static final Path ALERTS = Path.of("..", "deploy", "alerts");
    private static final Pattern METRIC = Pattern.compile("\\brulesync_[a-z_]+");

    @Test
    @RequiresTool("promtool")
    void promtoolFindsTheRulesValidAndEachAlertFiresWhereItShould() throws Exception {
        assertThat(promtool("check", "rules", "rulesync.rules.yaml")).contains("SUCCESS");
        assertThat(promtool("test", "rules", "rulesync.rules.test.yaml")).contains("SUCCESS");
    }

    @Test
    @RequiresPostgres
    void everyMetricTheRulesNameIsExposedByTheApiOrTheCompiler() throws Exception {
        Set<String> named = new TreeSet<>();
        Matcher m = METRIC.matcher(Files.readString(ALERTS.resolve("rulesync.rules.yaml")));
        while (m.find()) {
            named.add(m.group());
        }
        assertThat(named).hasSizeGreaterThanOrEqualTo(10);

        Set<String> exposed = new TreeSet<>();
        try (TestApi api = TestApi.onTwoVersions("shop")) {
            // What the api counts once nodes have acknowledged, one applied and one failed, in its own registry.
            Instant now = Instant.now();
            new AckMetrics(
                            api.context().getBean(MeterRegistry.class),
                            new EventLog(api.database().dataSource()))
                    .stored(
                            List.of(
                                    new NodeAck(
                                            "shop", "n1", 2, 2, NodeAck.Status.APPLIED, null, 12, 40, "iptables", now),
                                    new NodeAck(
                                            "shop",
                                            "n2",
                                            2,
                                            1,
                                            NodeAck.Status.FAILED,
                                            "ipv4: iptables-restore exited 1",
                                            7,
                                            0,
                                            "iptables",
                                            now)),
                            now);
            exposed.addAll(sampleNames(api.get("/actuator/prometheus").body()));
        }
        PrometheusMeterRegistry compiler = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CompilerMetrics metrics = new CompilerMetrics(compiler);
        metrics.refusedObjects("shop", 1);
        metrics.admissionProblemsChanged(
                "shop", List.of(new Problem("Service shop/web", "Service shop/web", "spec.clusterIP", "taken")));
        metrics.deadLettered(1);
        exposed.addAll(sampleNames(compiler.scrape()));

        assertThat(named).as("metrics the alerts name, against those exposed").isSubsetOf(exposed);
    }

    private static Set<String> sampleNames(String scrape) {
        return scrape.lines()
                .filter(l -> l.startsWith("rulesync_"))
                .map(l -> l.split("[{ ]", 2)[0])
                .collect(Collectors.toSet());
    }

    private static String promtool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("promtool"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(ALERTS.toFile())
                .redirectErrorStream(true)
                .start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(said).isZero();
        return said;
    }
}
