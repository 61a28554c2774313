package io.rulesync.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.mode.ModeChoice;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.model.cluster.IpFamily;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The agent's options become its configuration; bad ones are named. */
class AgentCommandTest {
    private static AgentConfig parse(String... args) {
        AgentCommand c = new AgentCommand();
        new CommandLine(c).parseArgs(args);
        return c.config();
    }

    @Test
    void defaultsAndOptions() {
        AgentConfig c = parse("--cluster", "shop", "--node", "node-a");
        assertThat(c.kafka()).isEqualTo("localhost:9092");
        assertThat(c.api()).isEqualTo(URI.create("http://localhost:8080"));
        assertThat(c.families()).containsExactly(IpFamily.IPV4, IpFamily.IPV6);
        assertThat(c.stateDir()).isEqualTo(Path.of("/var/lib/rulesync/agent"));
        assertThat(c.verifyEvery()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.topics().deltas()).isEqualTo("rulesync.rule-deltas");
        assertThat(c.mode()).isEqualTo(ProxyMode.IPTABLES);
        assertThat(c.ipvsDrainTimeout()).isEqualTo(Duration.ofSeconds(900));

        AgentConfig ipvs = parse(
                "--cluster",
                "shop",
                "--node",
                "node-a",
                "--mode",
                "ipvs",
                "--ipvs-unavailable",
                "refuse",
                "--ipvs-drain-timeout",
                "120",
                "--ipvs-exclude-cidrs",
                "192.0.2.0/24,fd00:beef::/64");
        assertThat(ipvs.mode()).isEqualTo(ProxyMode.IPVS);
        assertThat(ipvs.whenUnavailable()).isEqualTo(ModeChoice.WhenUnavailable.REFUSE);
        assertThat(ipvs.ipvsDrainTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(ipvs.ipvsExcludeCidrs())
                .extracting(Object::toString)
                .containsExactly("192.0.2.0/24", "fd00:beef::/64");
        assertThat(c.ipvsExcludeCidrs()).isEmpty();
        // --ipvs-unavailable above is the old name of the one policy for both modes.
        AgentConfig nft =
                parse("--cluster", "shop", "--node", "node-a", "--mode", "nftables", "--mode-unavailable", "refuse");
        assertThat(nft.mode()).isEqualTo(ProxyMode.NFTABLES);
        assertThat(nft.whenUnavailable()).isEqualTo(ModeChoice.WhenUnavailable.REFUSE);

        AgentConfig dry = parse(
                "--cluster",
                "shop",
                "--node",
                "node-a",
                "--dry-run",
                "/tmp/rules",
                "--ip-families",
                "ipv4",
                "--kafka-property",
                "security.protocol=SSL",
                "--verify-interval",
                "5");
        assertThat(dry.dryRun()).isEqualTo(Path.of("/tmp/rules"));
        assertThat(dry.stateDir())
                .as("a dry run keeps its state with its rules")
                .isEqualTo(Path.of("/tmp/rules"));
        assertThat(dry.families()).isEqualTo(List.of(IpFamily.IPV4));
        assertThat(dry.kafkaSettings()).containsEntry("security.protocol", "SSL");
        assertThat(dry.verifyEvery()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void kafkaSecurityComesFromAClientPropertiesFileAndOptionsOverrideIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("client.properties");
        Files.writeString(file, """
                # Kafka's client.properties format
                security.protocol=SASL_SSL
                sasl.mechanism=SCRAM-SHA-512
                sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="${env:KAFKA_PASSWORD}";
                """);
        AgentConfig c = parse(
                "--cluster",
                "shop",
                "--node",
                "node-a",
                "--kafka-config",
                file.toString(),
                "--kafka-property",
                "sasl.mechanism=PLAIN");
        assertThat(c.kafkaSettings())
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "PLAIN");
        // The reference stays for Kafka's EnvVarConfigProvider to resolve: the secret is never in a file or an
        // argument.
        assertThat((String) c.kafkaSettings().get("sasl.jaas.config")).contains("password=\"${env:KAFKA_PASSWORD}\"");
        assertThatThrownBy(() -> parse(
                        "--cluster",
                        "shop",
                        "--node",
                        "a",
                        "--kafka-config",
                        dir.resolve("missing").toString()))
                .hasMessageContaining("Kafka client config " + dir.resolve("missing"));
        assertThat(parse("--cluster", "shop", "--node", "a").kafkaSettings()).isEmpty();
    }

    @Test
    void metricsStayOnThisHostAndHealthIsOpenAsKubeProxyHasThem() {
        AgentCommand c = new AgentCommand();
        new CommandLine(c).parseArgs("--cluster", "shop", "--node", "a");
        assertThat(c.metricsAddress()).isEqualTo(new InetSocketAddress("127.0.0.1", 10249));
        assertThat(c.healthzAddress()).isEqualTo(new InetSocketAddress("0.0.0.0", 10256));
        new CommandLine(c)
                .parseArgs(
                        "--cluster",
                        "shop",
                        "--node",
                        "a",
                        "--metrics-bind-address",
                        "off",
                        "--healthz-bind-address",
                        "[::]:10256");
        assertThat(c.metricsAddress()).isNull();
        assertThat(c.healthzAddress()).isEqualTo(new InetSocketAddress("::", 10256));
        assertThatThrownBy(() -> new CommandLine(c)
                        .parseArgs("--cluster", "shop", "--node", "a", "--metrics-bind-address", "9469"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--metrics-bind-address")
                .hasMessageEndingWith("'9469' is not HOST:PORT or off");
        assertThatThrownBy(() -> new CommandLine(new AgentCommand())
                        .parseArgs("--cluster", "shop", "--node", "a", "--metrics-address", "0.0.0.0:9469"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageStartingWith("--metrics-address is now --metrics-bind-address");
    }

    @Test
    void theApiTokenComesFromAFileOnlyItsOwnerReadsOrTheEnvironmentNeverTheCommandLine(@TempDir Path dir)
            throws Exception {
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--api-token", "rs_secret"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageNotContaining("rs_secret")
                .hasMessage(
                        "--api-token is not taken: other local users can read a command line. Give the token in the environment "
                                + "variable RULESYNC_API_TOKEN, or in a file only you can read with --api-token-file FILE.");
        Path file = dir.resolve("token");
        Files.writeString(file, "rs_from-file\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertThat(parse("--cluster", "shop", "--node", "a", "--api-token-file", file.toString())
                        .apiToken())
                .isEqualTo("rs_from-file");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--api-token-file", file.toString()))
                .hasMessage("--api-token-file " + file
                        + ": every user of this machine may read it; chmod o-r it (600 or 640)");

        AgentCommand fromEnv = new AgentCommand();
        fromEnv.env = Map.of("RULESYNC_API_TOKEN", "rs_from-env");
        new CommandLine(fromEnv).parseArgs("--cluster", "shop", "--node", "a");
        assertThat(fromEnv.config().apiToken()).isEqualTo("rs_from-env");
        String help = new CommandLine(new AgentCommand()).getUsageMessage().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("--api-token-file=FILE", "RULESYNC_API_TOKEN", "There is no --api-token")
                .doesNotContain("--api-token=");
    }

    @Test
    void kafkaSecretsAreRefusedOnTheCommandLine() {
        for (String key :
                List.of("sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password")) {
            assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--kafka-property", key + "=secret"))
                    .hasMessageStartingWith("--kafka-property: " + key + " holds a secret")
                    .hasMessageNotContaining("=secret");
        }
        assertThat(parse("--cluster", "shop", "--node", "a", "--kafka-property", "sasl.mechanism=PLAIN")
                        .kafkaSettings())
                .containsEntry("sasl.mechanism", "PLAIN");
    }

    @Test
    void badOptionsAreNamed() {
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "Node_A"))
                .hasMessageStartingWith("--node: 'Node_A'");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--ip-families", "ipv5"))
                .hasMessageContaining("--ip-families")
                .hasMessageEndingWith("'ipv5' is not ipv4 or ipv6");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--kafka-property", "oops"))
                .hasMessage("--kafka-property: 'oops' is not KEY=VALUE");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--ipvs-drain-timeout", "-1"))
                .hasMessageStartingWith("--ipvs-drain-timeout: ");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--ipvs-exclude-cidrs", "192.0.2.0/33"))
                .hasMessageContaining("--ipvs-exclude-cidrs")
                .hasMessageContaining("192.0.2.0/33");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--mode", "userspace"))
                .hasMessageContaining("--mode")
                .hasMessageContaining("userspace");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--transport", "pigeon"))
                .hasMessageContaining("--transport")
                .hasMessageContaining("pigeon");
    }

    /**
     * A node's ServiceAccount token is renewed in its file by the kubelet: the agent sends the renewed one without a restart,
     * and a CA file given is what the api is verified by, whatever the configuration is changed to afterwards.
     */
    @Test
    void aRenewedTokenFileIsReadAgainAndTheCaFileIsKept(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "eyJfirst.a.b\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        Path ca = io.rulesync.testsupport.tls.TestPki.create(dir.resolve("pki"), "api")
                .caFile();
        AgentConfig config = parse(
                        "--cluster",
                        "shop",
                        "--node",
                        "a",
                        "--api",
                        "https://api.example:8080",
                        "--api-token-file",
                        file.toString(),
                        "--ca-file",
                        ca.toString())
                .withStream("api.example:8081");
        assertThat(config.tls()).hasToString(ca.toString());
        assertThat(config.apiClient().token()).isEqualTo("eyJfirst.a.b");
        Files.writeString(file, "eyJrenewed.a.b\n");
        Files.setLastModifiedTime(
                file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 1_000));
        assertThat(config.apiClient().token()).isEqualTo("eyJrenewed.a.b");
        assertThatThrownBy(() -> parse(
                        "--cluster",
                        "shop",
                        "--node",
                        "a",
                        "--ca-file",
                        dir.resolve("missing.crt").toString()))
                .hasMessageContaining("missing.crt");
    }
}
