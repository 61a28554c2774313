package io.rulesync.compiler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.TestInfrastructure;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/** {@code rulesync compiler} as the launcher runs it: its management port answers probes and serves metrics. */
@RequiresPostgres
@RequiresKafka
class CompilerCommandTest {
    @Test
    void probesAndMetricsAreServedAndKafkaSettingsComeFromTheClientConfig(@TempDir Path dir) throws Exception {
        Path client = dir.resolve("client.properties");
        Files.writeString(client, "client.id=rulesync-compiler-test\n");
        try (TestDatabase db = TestDatabase.create()) {
            CompilerCommand command = new CompilerCommand();
            List<String> args = new ArrayList<>(List.of(
                    "--kafka",
                    TestInfrastructure.kafkaBootstrapServers(),
                    "--db-url",
                    db.url(),
                    "--db-user",
                    db.user(),
                    "--port",
                    "0",
                    "--kafka-config",
                    client.toString(),
                    "--group",
                    "compiler-command-" + UUID.randomUUID()));
            args.addAll(db.passwordOptions());
            new CommandLine(command).parseArgs(args.toArray(String[]::new));
            try (ConfigurableApplicationContext app = command.start()) {
                assertThat(app.getEnvironment().getProperty("spring.kafka.properties.client.id"))
                        .isEqualTo("rulesync-compiler-test");
                URI base = URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port"));
                HttpClient http = HttpClient.newHttpClient();
                for (String probe : new String[] {"/actuator/health/liveness", "/actuator/health/readiness"}) {
                    HttpResponse<String> r = http.send(
                            HttpRequest.newBuilder(base.resolve(probe)).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(probe).isEqualTo(200);
                    assertThat(r.body()).contains("\"status\":\"UP\"");
                }
                String metrics = http.send(
                                HttpRequest.newBuilder(base.resolve("/actuator/prometheus"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
                assertThat(metrics).contains("rulesync_events_consumed_total", "rulesync_compile_duration_seconds");
            }
        }
    }
}
