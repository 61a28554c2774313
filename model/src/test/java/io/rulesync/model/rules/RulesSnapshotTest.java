package io.rulesync.model.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.event.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamReadConstraints;

class RulesSnapshotTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");

    private static RulesSnapshot snapshot(String comment) {
        RuleFragment f = new RuleFragment(
                Map.of(DispatchChain.NAT_SERVICES, List.of("-m comment --comment \"" + comment + "\" -j KUBE-SVC-1")),
                List.of(),
                List.of(new Chain("KUBE-SVC-1", List.of("-j KUBE-SEP-1"))));
        Unit u = Unit.of(new ServicePortName(new NamespacedName("ns", "s"), "", Protocol.TCP));
        return new RulesSnapshot(
                "c",
                3,
                T,
                ClusterRules.of(
                        new TreeMap<>(Map.of(new FragmentKey(IpFamily.IPV4, u, Variant.ALL), f)),
                        new TreeMap<>(Map.of("n1", "z1"))));
    }

    @Test
    void readsBackWhatItWrites() {
        RulesSnapshot s = snapshot("ns/s:http");
        assertThat(RulesSnapshot.fromJson(s.toJson())).isEqualTo(s);
        // Unknown fields are someone newer's: skipped, however deep.
        String extra = s.toJson().replace("{\"v\":1,", "{\"v\":1,\"later\":{\"a\":[1,{\"b\":null}]},");
        assertThat(RulesSnapshot.fromJson(extra)).isEqualTo(s);
    }

    @Test
    void theReaderHasNoSizeLimit() {
        // Jackson's defaults stop strings at 100 M characters; a snapshot's fragment text has no such bound.
        StreamReadConstraints limits = Json.MAPPER.tokenStreamFactory().streamReadConstraints();
        assertThat(limits.getMaxStringLength()).isEqualTo(Integer.MAX_VALUE);
        assertThat(limits.getMaxDocumentLength()).isEqualTo(-1);
        RulesSnapshot s = snapshot("x".repeat(4_000_000));
        assertThat(RulesSnapshot.fromJson(s.toJson())).isEqualTo(s);
    }

    @Test
    void refusesWhatIsNotASnapshotNamingWhy() {
        String good = snapshot("a").toJson();
        assertThatThrownBy(() -> RulesSnapshot.fromJson("{\"v\":1")).hasMessageStartingWith("snapshot is not JSON");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good + "{}")).hasMessageStartingWith("snapshot is not JSON");
        assertThatThrownBy(() -> RulesSnapshot.fromJson("[1]")).hasMessage("snapshot is not a JSON object");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"v\":1", "\"v\":2")))
                .hasMessage("v: snapshot format 2 is not supported");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"v\":1,", "")))
                .hasMessage("v: snapshot format null is not supported");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"version\":3", "\"version\":3,\"version\":4")))
                .hasMessageStartingWith("snapshot is not JSON")
                .hasMessageContaining("version");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"version\":3", "\"version\":\"3\"")))
                .hasMessage(
                        "snapshot is missing a field or has one of the wrong type: version: expected a whole number");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"family\":\"ipv4\",", "")))
                .hasMessage("snapshot is missing a field or has one of the wrong type: fragments[0].family: missing");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("\"node\":\"n1\"", "\"node\":1")))
                .hasMessage(
                        "snapshot is missing a field or has one of the wrong type: nodes[0].node: expected a string");
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace("KUBE-SEP-1", "KUBE-SEP-2")))
                .hasMessageContaining("does not match its hash");
    }

    @Test
    void theHashIsCheckedAgainstTheCanonicalText() throws Exception {
        RulesSnapshot s = snapshot("a");
        RuleFragment f = s.rules().fragments().values().iterator().next();
        String good = s.toJson();
        // The fragment read keeps the hash it was sent, which is the hash of its canonical text.
        RuleFragment read = RulesSnapshot.fromJson(good)
                .rules()
                .fragments()
                .values()
                .iterator()
                .next();
        assertThat(read.hash()).isEqualTo(f.hash());
        assertThat(read.text()).isEqualTo(f.text());
        // The same rules in a text that is not canonical (a blank line): with the canonical text's
        // hash they read as before; with the hash of the text as sent they are refused, since that
        // is not the hash the fragment has.
        String loose = f.text().replace("*nat\n", "*nat\n\n");
        String jsonLoose = "\"rules\":\"" + loose.replace("\n", "\\n").replace("\"", "\\\"") + "\"";
        String jsonRules = "\"rules\":\"" + f.text().replace("\n", "\\n").replace("\"", "\\\"") + "\"";
        assertThat(good).contains(jsonRules);
        assertThat(RulesSnapshot.fromJson(good.replace(jsonRules, jsonLoose))).isEqualTo(s);
        String ownHash = sha256(loose);
        assertThatThrownBy(() -> RulesSnapshot.fromJson(
                        good.replace(jsonRules, jsonLoose).replace(f.hash(), ownHash)))
                .hasMessageContaining("does not match its hash");
        // Rules changed on the way are refused against the hash sent with them.
        String tampered = f.text().replace("KUBE-SEP-1", "KUBE-SEP-2");
        String jsonTampered = "\"rules\":\"" + tampered.replace("\n", "\\n").replace("\"", "\\\"") + "\"";
        assertThatThrownBy(() -> RulesSnapshot.fromJson(good.replace(jsonRules, jsonTampered)))
                .hasMessageContaining("does not match its hash");
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }
}
