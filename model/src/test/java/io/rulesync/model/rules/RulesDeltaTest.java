package io.rulesync.model.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RulesDeltaTest {
    private static RuleFragment fragment(int i) {
        return new RuleFragment(
                Map.of(
                        DispatchChain.NAT_SERVICES,
                        List.of("-m comment --comment \"ns/s" + i + " cluster IP\" -j KUBE-SVC-" + i)),
                List.of(),
                List.of(new Chain("KUBE-SVC-" + i, List.of("-j KUBE-SEP-" + i))));
    }

    private static RulesDiff diff(int fragments) {
        List<RulesDiff.FragmentChange> changes = new ArrayList<>();
        for (int i = 0; i < fragments; i++) {
            Unit u = Unit.of(new ServicePortName(new NamespacedName("ns", "s" + i), "", Protocol.TCP));
            changes.add(
                    new RulesDiff.FragmentChange(new FragmentKey(IpFamily.IPV4, u, Variant.ALL), null, fragment(i)));
        }
        changes.add(new RulesDiff.FragmentChange(
                new FragmentKey(IpFamily.IPV4, Unit.FIXED, new Variant("n1", "*")), fragment(0), null));
        return new RulesDiff(
                changes,
                List.of(new RulesDiff.NodeChange("n1", null, "z1"), new RulesDiff.NodeChange("n2", "z", null)));
    }

    @Test
    void aLargeDeltaTravelsInPartsThatReassembleInAnyOrder() {
        RulesDelta d = new RulesDelta("c", 4, 5, Instant.parse("2026-11-29T12:00:00Z"), diff(500));
        List<String> parts = d.toJsonParts(10_000);
        assertThat(parts.size()).isGreaterThan(3);
        assertThat(parts).allSatisfy(p -> assertThat(p.length()).isLessThan(10_000));
        List<String> shuffled = new ArrayList<>(parts);
        Collections.reverse(shuffled);
        RulesDelta back = RulesDelta.fromJsonParts(shuffled);
        assertThat(back.diff().fragments())
                .extracting(RulesDiff.FragmentChange::key)
                .containsExactlyElementsOf(d.diff().fragments().stream()
                        .map(RulesDiff.FragmentChange::key)
                        .toList());
        assertThat(back.diff().fragments().get(0).after())
                .isEqualTo(d.diff().fragments().get(0).after());
        assertThat(back.diff().fragments().get(500).after()).isNull();
        assertThat(back.diff().nodes())
                .extracting(RulesDiff.NodeChange::zoneAfter)
                .containsExactly("z1", null);
        assertThat(RulesDelta.partOf(parts.get(1))).containsExactly(2, parts.size());
        assertThatThrownBy(() -> RulesDelta.fromJsonParts(parts.subList(0, 2))).hasMessageContaining("parts");
        // Small deltas stay one message.
        assertThat(new RulesDelta("c", 0, 1, Instant.EPOCH, diff(2)).toJsonParts(1_000_000))
                .hasSize(1);
    }

    @Test
    void aTamperedFragmentIsRefused() {
        String json = new RulesDelta("c", 0, 1, Instant.EPOCH, diff(1)).toJson().replace("KUBE-SEP-0", "KUBE-SEP-9");
        assertThatThrownBy(() -> RulesDelta.fromJson(json)).hasMessageContaining("does not match its hash");
    }

    @Test
    void refusesWhatIsNotADeltaNamingWhy() {
        String good = new RulesDelta("c", 0, 1, Instant.EPOCH, diff(1)).toJson();
        assertThat(RulesDelta.partOf(good)).containsExactly(1, 1);
        assertThatThrownBy(() -> RulesDelta.fromJson(good.replace("\"v\":1", "\"v\":2")))
                .hasMessage("v: delta format 2 is not supported");
        assertThatThrownBy(() -> RulesDelta.fromJson(good.substring(0, good.length() - 1)))
                .hasMessageStartingWith("delta is not JSON");
        assertThatThrownBy(() -> RulesDelta.fromJson(good.replace("\"base\":0", "\"base\":0,\"base\":0")))
                .hasMessageStartingWith("delta is not JSON")
                .hasMessageContaining("base");
        assertThatThrownBy(() -> RulesDelta.fromJson(good.replace("\"target\":1", "\"target\":true")))
                .hasMessage("delta is missing a field or has one of the wrong type: target: expected a whole number");
        assertThatThrownBy(() -> RulesDelta.partOf(good.replace("\"parts\":1", "\"parts\":\"1\"")))
                .hasMessage("parts: expected a whole number");
    }
}
