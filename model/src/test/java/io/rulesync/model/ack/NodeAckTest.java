package io.rulesync.model.ack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class NodeAckTest {
    private static final Instant AT = Instant.parse("2026-11-29T12:00:00Z");

    @Test
    void roundTrips() {
        NodeAck ok = new NodeAck("shop", "node-a", 7, 7, NodeAck.Status.APPLIED, null, 12, 345, "iptables", AT);
        NodeAck failed =
                new NodeAck("shop", "node-a", 8, 7, NodeAck.Status.FAILED, "ipv4: line 3 failed", 5, 0, "iptables", AT);
        assertThat(NodeAck.fromJson(ok.toJson())).isEqualTo(ok);
        assertThat(NodeAck.fromJson(failed.toJson())).isEqualTo(failed);
    }

    @Test
    void refusesWhatIsNotAnAck() {
        assertThatThrownBy(
                        () -> new NodeAck("shop", "Node_A", 1, 1, NodeAck.Status.APPLIED, null, 1, 1, "iptables", AT))
                .hasMessageContaining("node: 'Node_A'");
        assertThatThrownBy(() -> new NodeAck("shop", "a", 1, 1, NodeAck.Status.FAILED, null, 1, 1, "iptables", AT))
                .hasMessageContaining("error");
        assertThatThrownBy(() -> NodeAck.fromJson("{\"v\":2}")).hasMessageContaining("v: ack format 2");
        String good = new NodeAck("shop", "node-a", 1, 1, NodeAck.Status.APPLIED, null, 1, 1, "iptables", AT).toJson();
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("node-a", "Node_A")))
                .hasMessageStartingWith("node: 'Node_A'");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("APPLIED", "DONE")))
                .hasMessage("status: 'DONE' is not APPLIED or FAILED");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("\"version\":1", "\"version\":\"x\"")))
                .hasMessageStartingWith("ack is missing a field or has one of the wrong type");
        assertThatThrownBy(() -> NodeAck.fromJson("[1]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("\"node\":", "\"node\":\"b\",\"node\":")))
                .hasMessageStartingWith("ack is not JSON: Duplicate Object property \"node\"");
        assertThatThrownBy(() -> NodeAck.fromJson(good.substring(0, 20))).hasMessageStartingWith("ack is not JSON: ");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("\"ruleCount\":1", "\"ruleCount\":1.5")))
                .hasMessage("ack is missing a field or has one of the wrong type: ruleCount");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("\"ruleCount\":1", "\"ruleCount\":9999999999")))
                .hasMessage("ack is missing a field or has one of the wrong type: ruleCount");
        assertThatThrownBy(() -> NodeAck.fromJson(good.replace("\"at\":\"", "\"at\":\"x")))
                .hasMessageStartingWith("ack is missing a field or has one of the wrong type: at: ");
    }

    @Test
    void fieldsAreBoundedAndTheAgentCutsWhatAToolSaidToFit() {
        Instant at = Instant.parse("2026-12-03T00:00:00Z");
        String long5k = "x".repeat(5_000);
        assertThatThrownBy(() -> new NodeAck("c", "n", 2, 1, NodeAck.Status.FAILED, long5k, 1, 0, "iptables", at))
                .hasMessage("error: 5000 characters, at most 4096");
        assertThatThrownBy(() -> new NodeAck("c", "n", 2, 2, NodeAck.Status.APPLIED, null, 1, 0, long5k, at))
                .hasMessage("mode: 5000 characters, at most 1024");
        NodeAck cut = new NodeAck(
                "c", "n", 2, 1, NodeAck.Status.FAILED, NodeAck.bounded(long5k), 1, 0, NodeAck.boundedMode(long5k), at);
        assertThat(cut.error()).hasSize(NodeAck.MAX_ERROR).endsWith("…");
        assertThat(cut.mode()).hasSize(NodeAck.MAX_MODE);
        assertThat(NodeAck.fromJson(cut.toJson())).isEqualTo(cut);
    }

    /** The quick reading of an ack's time gives what {@link Instant#parse} gives, for what agents send and for anything else. */
    @Test
    void readsTimesAsInstantParseDoes() {
        java.util.Random random = new java.util.Random(20261204);
        for (int i = 0; i < 20_000; i++) {
            Instant t = Instant.ofEpochSecond(
                    random.nextLong(-62_000_000_000L, 253_402_300_799L),
                    random.nextInt(4) == 0
                            ? 0
                            : random.nextInt(1_000_000_000)
                                    / (int) Math.pow(10, random.nextInt(9))
                                    * (int) Math.pow(10, random.nextInt(3))
                                    % 1_000_000_000);
            assertThat(NodeAck.instant(t.toString())).as(t.toString()).isEqualTo(t);
        }
        // Either both give the same instant or both refuse.
        for (String s : java.util.List.of(
                "2026-12-04T12:00:00Z",
                "2026-12-04T12:00:00.5Z",
                "2026-12-04T12:00:00.123456789Z",
                "2024-02-29T23:59:59Z",
                "2026-12-04T12:00:00+01:00",
                "+12026-12-04T12:00:00Z",
                "2026-12-31T23:59:60Z",
                "2026-12-04T24:00:00Z",
                "2026-02-29T12:00:00Z",
                "2026-04-31T12:00:00Z",
                "2026-13-01T12:00:00Z",
                "2026-12-04T12:00:00.Z",
                "2026-12-04T12:00:00.1234567890Z",
                "2026-12-04T1a:00:00Z",
                "2026-12-04 12:00:00Z",
                "2026-12-04T12:00:00z")) {
            Instant expected;
            try {
                expected = Instant.parse(s);
            } catch (java.time.format.DateTimeParseException e) {
                assertThatThrownBy(() -> NodeAck.instant(s))
                        .as(s)
                        .isInstanceOf(java.time.format.DateTimeParseException.class);
                continue;
            }
            assertThat(NodeAck.instant(s)).as(s).isEqualTo(expected);
        }
    }
}
