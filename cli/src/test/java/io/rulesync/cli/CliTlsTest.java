package io.rulesync.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.cli.connect.ExitCode;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.tls.TestPki;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line against an api that serves HTTPS: it verifies the api by the CA it is given, and says so when it cannot. */
@RequiresPostgres
class CliTlsTest {
    @TempDir
    Path home;

    @Test
    void theApiIsVerifiedByTheCaFileAndAnotherCaIsRefusedSayingWhy() throws Exception {
        TestPki pki = TestPki.create(home.resolve("pki"), "api");
        TestPki.Issued cert = pki.localhost("api");
        TestPki other = TestPki.create(home.resolve("other"), "other");
        try (TestDatabase db = TestDatabase.create()) {
            StoredClusters.twoVersions(CompilerStores.on(db.dataSource()), "shop");
            try (TestApi api = TestApi.on(
                    db.url(),
                    db.user(),
                    db.password(),
                    Map.of(
                            "spring.ssl.bundle.pem.api.keystore.certificate", "file:" + cert.certFile(),
                            "spring.ssl.bundle.pem.api.keystore.private-key", "file:" + cert.keyFile(),
                            "server.ssl.bundle", "api"))) {
                String https =
                        "https://localhost:" + api.context().getEnvironment().getProperty("local.server.port");
                OperatorCliTest.Run trusted = run(https, pki.caFile(), "clusters", "-o", "json");
                assertThat(trusted.exit()).as(trusted.err()).isEqualTo(ExitCode.OK);
                assertThat(trusted.out()).contains("\"shop\"");

                OperatorCliTest.Run untrusted = run(https, other.caFile(), "clusters");
                assertThat(untrusted.exit()).isEqualTo(ExitCode.UNREACHABLE);
                assertThat(untrusted.err())
                        .startsWith("rulesync: the api at " + https + " is not trusted: its certificate could not "
                                + "be verified (")
                        .contains("give the CA that signed it with --ca-file or RULESYNC_CA_FILE");
                assertThat(untrusted.out()).isEmpty();
            }
        }
    }

    /** The command line as a process of its own, with the viewer's token and {@code caFile}. */
    private OperatorCliTest.Run run(String api, Path caFile, String... args) throws Exception {
        return OperatorCliTest.run(
                home,
                Map.of(
                        "RULESYNC_API",
                        api,
                        "RULESYNC_TOKEN",
                        TestApi.VIEWER.token(),
                        "RULESYNC_CA_FILE",
                        caFile.toString()),
                args);
    }
}
