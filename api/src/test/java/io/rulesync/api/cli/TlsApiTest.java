package io.rulesync.api.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import io.rulesync.api.access.ApiTokens;
import io.rulesync.api.access.Role;
import io.rulesync.api.stream.NodeStreamServer;
import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestNode;
import io.rulesync.client.ApiClient;
import io.rulesync.client.stream.NodeStream;
import io.rulesync.client.tls.TrustRoots;
import io.rulesync.compiler.runtime.CompilerStores;
import io.rulesync.model.stream.NodeFrame;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.tls.TestPki;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine;

/**
 * The api as {@code rulesync api --tls-cert --tls-key} runs it: HTTPS and TLS node streams, verified by clients against a
 * CA file, refused by clients that trust another CA, a renewed certificate served without a restart, and plain HTTP
 * refused on any but a loopback address unless the operator says so.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class TlsApiTest {
    private static final ApiTokens.Issued VIEWER = ApiTokens.issue("vera", Role.VIEWER);
    private static final ApiTokens.Issued NODE =
            ApiTokens.issue("shop-n1", Role.AGENT, new ApiTokens.Scope("shop", "n1"));

    @TempDir
    static Path dir;

    private TestDatabase db;
    private TestPki pki;
    private TestPki.Issued served;
    private ConfigurableApplicationContext app;
    private String https;
    private String streams;

    @BeforeAll
    void setUp() throws Exception {
        db = TestDatabase.create();
        StoredClusters.twoVersions(CompilerStores.on(db.dataSource()), "shop");
        pki = TestPki.create(dir.resolve("pki"), "api");
        served = pki.localhost("api");
        Path tokens = Files.writeString(dir.resolve("tokens.txt"), VIEWER.line() + "\n" + NODE.line() + "\n");
        ApiCommand command = new ApiCommand();
        List<String> args = new ArrayList<>(List.of(
                "--port",
                "0",
                "--stream-port",
                "0",
                "--address",
                "127.0.0.1",
                "--tls-cert",
                served.certFile().toString(),
                "--tls-key",
                served.keyFile().toString(),
                "--db-url",
                db.url(),
                "--db-user",
                db.user(),
                "--tokens-file",
                tokens.toString()));
        args.addAll(db.passwordOptions());
        new CommandLine(command).parseArgs(args.toArray(String[]::new));
        app = command.start();
        https = "https://localhost:" + app.getEnvironment().getProperty("local.server.port");
        streams = "localhost:" + app.getBean(NodeStreamServer.class).port();
    }

    @AfterAll
    void tearDown() {
        if (app != null) {
            app.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private HttpResponse<String> get(HttpClient http, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(https + path))
                        .header("Authorization", "Bearer " + VIEWER.token())
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void clientsVerifyTheApiByTheirCaFileAndRefuseAnother() throws Exception {
        assertThat(get(ApiClient.newHttpClient(TrustRoots.of(pki.caFile())), "/api/v1/clusters")
                        .statusCode())
                .isEqualTo(200);
        try (TestNode node = new TestNode(
                NodeStream.channel(streams, TrustRoots.of(pki.caFile()), null, false, 0),
                "shop",
                "n1",
                NODE.token(),
                4)) {
            node.stream.send(new NodeFrame.Resume(1));
            assertThat(node.deltas().upTo()).isEqualTo(2);
        }

        TestPki other = TestPki.create(dir.resolve("other"), "other");
        HttpClient wrongCa = ApiClient.newHttpClient(TrustRoots.of(other.caFile()));
        assertThatThrownBy(() -> get(wrongCa, "/api/v1/clusters")).isInstanceOf(SSLHandshakeException.class);
        try (TestNode node = new TestNode(
                NodeStream.channel(streams, TrustRoots.of(other.caFile()), null, false, 0),
                "shop",
                "n1",
                NODE.token(),
                4)) {
            Status refused = node.end(20);
            assertThat(refused.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(refused.getCause()).isInstanceOf(SSLHandshakeException.class);
        }
        // Plain text reaches neither: the token is never sent in the clear.
        HttpResponse<String> plain = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(https.replace("https:", "http:") + "/api/v1/clusters"))
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(400);
        try (TestNode node =
                new TestNode(NodeStream.channel(streams, null, null, false, 0), "shop", "n1", NODE.token(), 4)) {
            assertThat(node.end(20).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
    }

    @Test
    void aRenewedCertificateIsServedWithoutARestart() throws Exception {
        TestPki.Issued renewed = pki.server("renewed", List.of("localhost"), List.of("127.0.0.1"));
        assertThat(serial(port(https))).isEqualTo(served.certificate().getSerialNumber());
        // As cert-manager renews a Secret's files: both replaced.
        Files.copy(renewed.keyFile(), served.keyFile(), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(renewed.certFile(), served.certFile(), StandardCopyOption.REPLACE_EXISTING);
        BigInteger fresh = renewed.certificate().getSerialNumber();
        await().atMost(Duration.ofSeconds(30)).until(() -> fresh.equals(serial(port(https))));
        await().atMost(Duration.ofSeconds(30))
                .until(() -> fresh.equals(serial(Integer.parseInt(streams.split(":")[1]))));
        assertThat(get(ApiClient.newHttpClient(TrustRoots.of(pki.caFile())), "/api/v1/clusters")
                        .statusCode())
                .isEqualTo(200);
    }

    private static int port(String url) {
        return URI.create(url).getPort();
    }

    /** The serial number of the certificate served on this port (ALPN h2, as gRPC's clients ask). */
    private BigInteger serial(int port) throws Exception {
        try (SSLSocket s = (SSLSocket)
                TrustRoots.of(pki.caFile()).sslContext().getSocketFactory().createSocket("localhost", port)) {
            SSLParameters p = s.getSSLParameters();
            p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
            s.setSSLParameters(p);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    @Test
    void plainHttpIsRefusedOnANonLoopbackAddressUnlessTheOperatorSaysSo() {
        ApiCommand command = new ApiCommand();
        new CommandLine(command).parseArgs("--address", "0.0.0.0", "--db-url", db.url());
        assertThatThrownBy(command::start)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "the api would serve plain HTTP on 0.0.0.0, where tokens and rules travel in clear text: give --tls-cert "
                                + "and --tls-key, or --address 127.0.0.1, or --insecure-http to accept it");
        ApiCommand told = new ApiCommand();
        new CommandLine(told).parseArgs("--address", "0.0.0.0", "--insecure-http", "--db-url", db.url());
        assertThat(told.transport()).containsEntry("rulesync.api.insecure-http", true);
        ApiCommand loopback = new ApiCommand();
        new CommandLine(loopback).parseArgs("--address", "127.0.0.1", "--db-url", db.url());
        assertThat(loopback.transport()).isEmpty();
        ApiCommand half = new ApiCommand();
        new CommandLine(half).parseArgs("--tls-cert", served.certFile().toString(), "--db-url", db.url());
        assertThatThrownBy(half::transport).hasMessage("--tls-cert and --tls-key go together");
    }

    @Test
    void theInsecureMetricSaysWhatTheApiWasTold() {
        // This api serves TLS: the metric says 0.
        assertThat(app.getBean(MeterRegistry.class)
                        .get("rulesync.api.insecure.http")
                        .gauge()
                        .value())
                .isZero();
    }
}
