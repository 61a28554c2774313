package io.rulesync.model.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.stream.NodeFrame;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LineageTest {
    private static RulesDiff.FragmentChange change(String service, String target) {
        Unit u = Unit.of(new ServicePortName(new NamespacedName("ns", service), "", Protocol.TCP));
        RuleFragment f =
                new RuleFragment(Map.of(DispatchChain.NAT_SERVICES, List.of("-j " + target)), List.of(), List.of());
        return new RulesDiff.FragmentChange(new FragmentKey(IpFamily.IPV4, u, Variant.ALL), null, f);
    }

    private static final RulesDiff A = new RulesDiff(
            List.of(change("a", "KUBE-SVC-A"), change("b", "KUBE-SVC-B")),
            List.of(new RulesDiff.NodeChange("n1", null, "z1")));

    @Test
    void theSameChangeOnTheSameHistoryHasTheSameLineageWhateverTheOrderItIsListedIn() {
        List<RulesDiff.FragmentChange> reversed = new ArrayList<>(A.fragments());
        Collections.reverse(reversed);
        String one = Lineage.next("", 1, A);
        assertThat(Lineage.next("", 1, new RulesDiff(reversed, A.nodes()))).isEqualTo(one);
        assertThat(one).matches("[0-9a-f]{32}");
    }

    @Test
    void anotherParentNumberOrChangeIsAnotherLineage() {
        String one = Lineage.next("", 1, A);
        String two = Lineage.next(one, 2, A);
        assertThat(Lineage.next(
                        Lineage.next("", 1, new RulesDiff(List.of(change("a", "KUBE-SVC-A")), A.nodes())), 2, A))
                .as("another parent")
                .isNotEqualTo(two);
        assertThat(Lineage.next(one, 3, A)).as("another number").isNotEqualTo(two);
        assertThat(Lineage.next(one, 2, new RulesDiff(List.of(change("a", "KUBE-SVC-X")), List.of())))
                .as("another change")
                .isNotEqualTo(two);
        assertThat(Lineage.next(
                        one, 2, new RulesDiff(A.fragments(), List.of(new RulesDiff.NodeChange("n1", "z1", null)))))
                .as("a node that left instead of one that came")
                .isNotEqualTo(two);
    }

    @Test
    void anUnknownLineageAgreesWithAnyAndTwoKnownOnesOnlyWhenEqual() {
        String one = Lineage.next("", 1, A);
        assertThat(Lineage.agree(one, one)).isTrue();
        assertThat(Lineage.agree(Lineage.UNKNOWN, one)).isTrue();
        assertThat(Lineage.agree(one, Lineage.UNKNOWN)).isTrue();
        assertThat(Lineage.agree(one, Lineage.next(one, 2, A))).isFalse();
    }

    @Test
    void aLineageFromOutsideIsCheckedAndNamesItsField() {
        assertThat(Lineage.check("lineage", null)).isEmpty();
        assertThat(Lineage.check("lineage", "0123456789abcdef0123456789abcdef"))
                .isEqualTo("0123456789abcdef0123456789abcdef");
        assertThatThrownBy(() -> Lineage.check("lineage", "0123456789ABCDEF0123456789ABCDEF"))
                .hasMessage("lineage: '0123456789ABCDEF0123456789ABCDEF' is not a lineage (32 lowercase hex digits)");
        assertThatThrownBy(() -> Lineage.check("baseLineage", "x".repeat(5000)))
                .hasMessageStartingWith("baseLineage: 'xxxx")
                .hasMessageEndingWith("...' is not a lineage (32 lowercase hex digits)");
    }

    @Test
    void deltasSnapshotsAndResumesCarryTheirLineagesOnTheWire() {
        String base = Lineage.next("", 1, A);
        String target = Lineage.next(base, 2, A);
        RulesDelta d = new RulesDelta("c", 1, 2, Instant.EPOCH, A, base, target);
        RulesDelta back = RulesDelta.fromJson(d.toJson());
        assertThat(back.baseLineage()).isEqualTo(base);
        assertThat(back.lineage()).isEqualTo(target);
        List<String> parts = new RulesDelta("c", 1, 2, Instant.EPOCH, A, base, target).toJsonParts(300);
        assertThat(parts).hasSizeGreaterThan(1);
        assertThat(RulesDelta.fromJsonParts(parts).lineage()).isEqualTo(target);
        assertThat(RulesDelta.fromJson(new RulesDelta("c", 1, 2, Instant.EPOCH, A).toJson())
                        .lineage())
                .as("written before lineages")
                .isEmpty();
        assertThatThrownBy(() -> RulesDelta.fromJson(d.toJson().replace(target, "not-a-lineage")))
                .hasMessageContaining("lineage: ");

        RulesSnapshot s = new RulesSnapshot("c", 2, Instant.EPOCH, A.applyTo(ClusterRules.EMPTY), target);
        assertThat(RulesSnapshot.fromJson(s.toJson()).lineage()).isEqualTo(target);

        assertThat(NodeFrame.read(new NodeFrame.Resume(2, target).bytes())).isEqualTo(new NodeFrame.Resume(2, target));
        assertThatThrownBy(() -> NodeFrame.read("{\"v\":1,\"type\":\"resume\",\"after\":2,\"lineage\":7}".getBytes()))
                .hasMessage("lineage: not a string");
    }
}
