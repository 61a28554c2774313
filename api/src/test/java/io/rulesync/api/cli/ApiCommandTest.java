package io.rulesync.api.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/** {@code rulesync api} as the launcher runs it: options parsed by picocli, the server up and answering. */
@RequiresPostgres
class ApiCommandTest {
    @Test
    void theCommandServesSnapshotsFromTheGivenDatabase() throws Exception {
        try (TestDatabase db = TestDatabase.create()) {
            StoredClusters.twoVersions(CompilerStores.on(db.dataSource()), "edge");
            Path tokens = Files.createTempFile("tokens", ".txt");
            Files.writeString(tokens, "# generated for the test\n" + TestApi.AGENT.line() + "\n");
            ApiCommand command = new ApiCommand();
            List<String> args = new ArrayList<>(List.of(
                    "--port",
                    "0",
                    "--address",
                    "127.0.0.1",
                    "--db-url",
                    db.url(),
                    "--db-user",
                    db.user(),
                    "--tokens-file",
                    tokens.toString()));
            args.addAll(db.passwordOptions());
            new CommandLine(command).parseArgs(args.toArray(String[]::new));
            try (ConfigurableApplicationContext app = command.start()) {
                String port = app.getEnvironment().getProperty("local.server.port");
                HttpResponse<String> r = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                                                + "/api/v1/clusters/edge/versions/latest/snapshot?node=n1"))
                                        .header("Authorization", "Bearer " + TestApi.AGENT.token())
                                        .timeout(Duration.ofSeconds(60))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(RulesSnapshot.fromJson(r.body()).version()).isEqualTo(2);
            } finally {
                Files.delete(tokens);
            }
        }
    }

    @Test
    void defaults() {
        ApiCommand command = new ApiCommand();
        CommandLine cl = new CommandLine(command);
        cl.parseArgs("--db-url", "jdbc:postgresql://127.0.0.1:5432/x");
        assertThat((Integer) cl.getCommandSpec().findOption("--port").getValue())
                .isEqualTo(8080);
        assertThat((String) cl.getCommandSpec().findOption("--db-user").getValue())
                .isEqualTo("postgres");
        assertThat(cl.getCommandSpec().findOption("--db-password").hidden()).isTrue();
        assertThat(cl.getUsageMessage()).contains("--db-password-file=FILE").doesNotContain("--db-password=");
    }
}
