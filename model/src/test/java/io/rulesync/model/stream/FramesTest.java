package io.rulesync.model.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.ack.NodeAck;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The node stream's frames: read back as written, and refused when their bytes are not what their header says. */
class FramesTest {
    private static final byte[] BODY =
            "{\"cluster\":\"shop\",\"base\":1,\"target\":2}\n".getBytes(StandardCharsets.UTF_8);
    private static final String L1 = "0123456789abcdef0123456789abcdef";
    private static final String L2 = "fedcba9876543210fedcba9876543210";

    @Test
    void deltasCarryTheirLengthAndDigestAndReadBack() {
        byte[] frame = ServerFrame.deltas(5, 1, 2, L1, L2, BODY, false);
        String header =
                new String(frame, StandardCharsets.UTF_8).lines().findFirst().orElseThrow();
        assertThat(header)
                .isEqualTo("{\"v\":1,\"type\":\"deltas\",\"head\":5,\"after\":1,\"upTo\":2,\"baseLineage\":\"" + L1
                        + "\",\"lineage\":\"" + L2 + "\",\"bytes\":" + BODY.length + ",\"sha256\":\"" + sha256(BODY)
                        + "\"}");
        ServerFrame.Deltas d = (ServerFrame.Deltas) ServerFrame.read(frame);
        assertThat(d.head()).isEqualTo(5);
        assertThat(d.after()).isEqualTo(1);
        assertThat(d.upTo()).isEqualTo(2);
        assertThat(d.baseLineage()).isEqualTo(L1);
        assertThat(d.lineage()).isEqualTo(L2);
        assertThat(d.ndjson()).isEqualTo(BODY);
        assertThat(ServerFrame.read(ServerFrame.snapshot(9, "version 1 is gone; load a snapshot")))
                .isEqualTo(new ServerFrame.Snapshot(9, "version 1 is gone; load a snapshot"));
    }

    private static String sha256(byte[] b) {
        try {
            return java.util.HexFormat.of()
                    .formatHex(
                            java.security.MessageDigest.getInstance("SHA-256").digest(b));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aDeflatedBodyIsCheckedAsItTravelsAndReadAsItWasMade() {
        byte[] lines = ("{\"cluster\":\"shop\",\"base\":1,\"target\":2,\"rules\":["
                        + "\"-A KUBE-SVC-X -j KUBE-SEP-Y\",".repeat(200) + "\"\"]}\n")
                .getBytes(StandardCharsets.UTF_8);
        byte[] frame = ServerFrame.deltas(5, 1, 2, L1, L2, lines, true);
        assertThat(frame.length).isLessThan(lines.length / 4);
        String header =
                new String(frame, StandardCharsets.UTF_8).lines().findFirst().orElseThrow();
        byte[] sent = Arrays.copyOfRange(frame, header.length() + 1, frame.length);
        assertThat(header)
                .contains("\"encoding\":\"deflate\",\"inflated\":" + lines.length + ",\"bytes\":" + sent.length
                        + ",\"sha256\":\"" + sha256(sent) + "\"");
        ServerFrame.Deltas d = (ServerFrame.Deltas) ServerFrame.read(frame);
        assertThat(d.deflated()).isTrue();
        assertThat(d.body()).isEqualTo(sent);
        assertThat(d.ndjson()).isEqualTo(lines);

        // A body whose digest matches its header but that does not inflate to what the header says is refused when
        // read.
        String lying = header.replace("\"inflated\":" + lines.length, "\"inflated\":" + (lines.length + 1)) + "\n";
        ServerFrame.Deltas wrong =
                (ServerFrame.Deltas) ServerFrame.read(concat(lying.getBytes(StandardCharsets.UTF_8), sent));
        assertThatThrownBy(wrong::ndjson)
                .hasMessage("deltas to 2: the deflated body does not inflate to the " + (lines.length + 1)
                        + " bytes its header says");
        String bomb = header.replace("\"inflated\":" + lines.length, "\"inflated\":" + (ServerFrame.MAX_INFLATED + 1L))
                + "\n";
        assertThatThrownBy(() -> ServerFrame.read(concat(bomb.getBytes(StandardCharsets.UTF_8), sent)))
                .hasMessage("deltas to 2: " + (ServerFrame.MAX_INFLATED + 1L) + " bytes inflated, more than the "
                        + ServerFrame.MAX_INFLATED + " a node takes");
        String other = header.replace("\"deflate\"", "\"br\"") + "\n";
        assertThatThrownBy(() -> ServerFrame.read(concat(other.getBytes(StandardCharsets.UTF_8), sent)))
                .hasMessage("deltas to 2: encoding 'br' is not deflate");
    }

    @Test
    void aFrameFromAnApiThatNamesNoLineageReadsAsUnknownAndAMalformedOneIsRefused() {
        String plain = "{\"v\":1,\"type\":\"deltas\",\"head\":5,\"after\":1,\"upTo\":2,\"bytes\":" + BODY.length
                + ",\"sha256\":\"" + sha256(BODY) + "\"}\n";
        ServerFrame.Deltas d =
                (ServerFrame.Deltas) ServerFrame.read(concat(plain.getBytes(StandardCharsets.UTF_8), BODY));
        assertThat(d.baseLineage()).isEmpty();
        assertThat(d.lineage()).isEmpty();
        String bad = plain.replace("\"bytes\"", "\"lineage\":\"v3\",\"bytes\"");
        assertThatThrownBy(() -> ServerFrame.read(concat(bad.getBytes(StandardCharsets.UTF_8), BODY)))
                .hasMessage("frame header: lineage: 'v3' is not a lineage (32 lowercase hex digits)");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    @Test
    void aBodyThatIsNotTheOneMadeIsRefused() {
        byte[] frame = ServerFrame.deltas(5, 1, 2, L1, L2, BODY, false);
        byte[] changed = frame.clone();
        changed[changed.length - 3] = '9';
        assertThatThrownBy(() -> ServerFrame.read(changed)).hasMessageStartingWith("deltas to 2: SHA-256 ");
        byte[] cut = Arrays.copyOf(frame, frame.length - 1);
        assertThatThrownBy(() -> ServerFrame.read(cut))
                .hasMessage("deltas to 2: " + (BODY.length - 1) + " bytes, the header says " + BODY.length);
        assertThatThrownBy(() -> ServerFrame.read("{\"v\":2,\"type\":\"deltas\"}".getBytes()))
                .hasMessage("frame format 2 is not supported");
        assertThatThrownBy(() -> ServerFrame.read("{\"v\":1,\"type\":\"other\",\"head\":1}".getBytes()))
                .hasMessage("frame type 'other' is not deltas or snapshot");
    }

    @Test
    void nodeFramesReadBackAndNameWhatIsWrong() {
        NodeAck ack = new NodeAck(
                "shop",
                "n1",
                2,
                2,
                NodeAck.Status.APPLIED,
                null,
                3,
                12,
                "iptables",
                Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(NodeFrame.read(new NodeFrame.Resume(7).bytes())).isEqualTo(new NodeFrame.Resume(7));
        assertThat(NodeFrame.read(new NodeFrame.Acks(List.of(ack, ack)).bytes()))
                .isEqualTo(new NodeFrame.Acks(List.of(ack, ack)));
        // An acks frame holds each ack in the form POST .../acks takes, as agents of earlier releases wrote it.
        assertThat(new String(new NodeFrame.Acks(List.of(ack, ack)).bytes(), StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":1,\"type\":\"acks\",\"acks\":[" + ack.toJson() + "," + ack.toJson() + "]}");
        assertThatThrownBy(() -> NodeFrame.read("{\"v\":1,\"type\":\"acks\",\"acks\":[{\"v\":1}]}".getBytes()))
                .hasMessageStartingWith("acks[0]: ");
        assertThatThrownBy(() -> NodeFrame.read("{\"v\":1,\"type\":\"resume\",\"after\":-1}".getBytes()))
                .hasMessage("after: -1 is negative");
        assertThatThrownBy(() -> NodeFrame.read("[]".getBytes())).hasMessage("v: frame format null is not supported");
        assertThatThrownBy(() -> new NodeFrame.Acks(Collections.nCopies(101, ack)))
                .hasMessage("acks: expected 1-100, got 101");
    }
}
