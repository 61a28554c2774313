package io.rulesync.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.AgentConfig;
import io.rulesync.model.cluster.IpFamily;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
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
        assertThat(c.topics().acks()).isEqualTo("rulesync.node-acks");

        AgentConfig dry = parse("--cluster", "shop", "--node", "node-a", "--dry-run", "/tmp/rules", "--ip-families", "ipv4",
                "--kafka-property", "security.protocol=SSL", "--verify-interval", "5");
        assertThat(dry.dryRun()).isEqualTo(Path.of("/tmp/rules"));
        assertThat(dry.stateDir()).as("a dry run keeps its state with its rules").isEqualTo(Path.of("/tmp/rules"));
        assertThat(dry.families()).isEqualTo(List.of(IpFamily.IPV4));
        assertThat(dry.kafkaSettings()).containsEntry("security.protocol", "SSL");
        assertThat(dry.verifyEvery()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void badOptionsAreNamed() {
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "Node_A")).hasMessageStartingWith("--node: 'Node_A'");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--ip-families", "ipv5"))
                .hasMessage("--ip-families: 'ipv5' is not ipv4 or ipv6");
        assertThatThrownBy(() -> parse("--cluster", "shop", "--node", "a", "--kafka-property", "oops"))
                .hasMessage("--kafka-property: 'oops' is not KEY=VALUE");
    }
}
