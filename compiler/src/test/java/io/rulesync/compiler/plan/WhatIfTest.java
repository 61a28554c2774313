package io.rulesync.compiler.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.plan.WhatIf.Action;
import io.rulesync.compiler.plan.WhatIf.Change;
import io.rulesync.compiler.plan.WhatIf.ObjectChange;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.RollbackRequested;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WhatIfTest {
    private static final String C = "demo-a";
    private static final Instant T = Fixtures.T;

    private static ClusterEvent up(String yaml) {
        return Fixtures.upsert(C, yaml);
    }

    /** Two nodes, shop/web with one endpoint on node-a: version 1. */
    private static ClusterHead cluster() {
        return ClusterHead.empty(C)
                .apply(List.of(
                        new SettingsChanged(C, ClusterSettings.DEFAULT, T),
                        up(Fixtures.node("node-a", "192.168.0.2")),
                        up(Fixtures.node("node-b", "192.168.0.3")),
                        up(Fixtures.service("web", "10.96.0.1")),
                        up(Fixtures.slice("web", "node-a", "10.244.0.10"))))
                .next();
    }

    @Test
    void anAppliedObjectChangesOnlyItsUnitAndIsNamedAsCreatedChangedOrUnchanged() {
        ClusterHead head = cluster();
        List<ClusterObject> objects = List.of(
                Fixtures.object(Fixtures.service("web", "10.96.0.1")),
                Fixtures.object(Fixtures.slice("web", "node-a", "10.244.0.10", "10.244.0.11")),
                Fixtures.object(Fixtures.service("cart", "10.96.0.2")));

        WhatIf.Outcome o = WhatIf.of(head, objects, Action.APPLY, T);

        assertThat(o.objects())
                .containsExactly(
                        new ObjectChange("Service shop/web", Change.UNCHANGED),
                        new ObjectChange("EndpointSlice shop/web-1", Change.CHANGED),
                        new ObjectChange("Service shop/cart", Change.CREATED));
        assertThat(o.diff().fragments())
                .extracting(c -> c.key().unit().id())
                .containsOnly("shop/web:http/TCP", "shop/cart:http/TCP");
        assertThat(o.before()).isEqualTo(head.published());
        assertThat(o.after()
                        .ruleSet("node-b", io.rulesync.model.cluster.IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .contains("10.244.0.11")
                .contains("shop/cart:http has no endpoints");
        assertThat(o.refused()).isEmpty();
        // Nothing is stored or kept: the head is the same value.
        assertThat(head).isEqualTo(cluster());
    }

    @Test
    void theSameObjectsAgainChangeNothing() {
        ClusterHead head = cluster();
        WhatIf.Outcome o =
                WhatIf.of(head, List.of(Fixtures.object(Fixtures.node("node-a", "192.168.0.2"))), Action.APPLY, T);
        assertThat(o.diff().isEmpty()).isTrue();
        assertThat(o.objects()).containsExactly(new ObjectChange("Node node-a", Change.UNCHANGED));
    }

    @Test
    void removingSaysWhatIsNotThereAndDropsTheRulesOfWhatIs() {
        WhatIf.Outcome o = WhatIf.of(
                cluster(),
                List.of(
                        Fixtures.object(Fixtures.service("web", "10.96.0.1")),
                        Fixtures.object(Fixtures.service("cart", "10.96.0.2"))),
                Action.DELETE,
                T);
        assertThat(o.objects())
                .containsExactly(
                        new ObjectChange("Service shop/web", Change.DELETED),
                        new ObjectChange("Service shop/cart", Change.ABSENT));
        assertThat(o.after()
                        .ruleSet("node-a", io.rulesync.model.cluster.IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .doesNotContain("10.96.0.1/32");
        assertThat(o.diff().isEmpty()).isFalse();
    }

    @Test
    void aServiceClaimingATakenClusterIpIsRefusedAndItsRulesLeftOut() {
        // shop/api sorts before shop/web: admission lets the earlier name keep the address, so web is the one left out.
        WhatIf.Outcome o =
                WhatIf.of(cluster(), List.of(Fixtures.object(Fixtures.service("api", "10.96.0.1"))), Action.APPLY, T);
        assertThat(o.refused()).singleElement().satisfies(p -> {
            assertThat(p.object()).isEqualTo("Service shop/web");
            assertThat(p.field()).isEqualTo("spec.clusterIPs[0]");
            assertThat(p.message()).contains("shop/api");
        });
        assertThat(o.admitted()).isEmpty();

        // Removing the newcomer again lets web back in.
        ClusterHead crowded = cluster()
                .apply(List.of(up(Fixtures.service("api", "10.96.0.1"))))
                .next();
        WhatIf.Outcome back =
                WhatIf.of(crowded, List.of(Fixtures.object(Fixtures.service("api", "10.96.0.1"))), Action.DELETE, T);
        assertThat(back.admitted())
                .singleElement()
                .satisfies(p -> assertThat(p.object()).isEqualTo("Service shop/web"));
        assertThat(back.refused()).isEmpty();
    }

    @Test
    void aPinnedClusterIsComparedWithWhatItCompilesNotWithThePinnedRules() {
        ClusterHead v1 = cluster();
        ClusterHead v2 = v1.apply(List.of(up(Fixtures.slice("web", "node-a", "10.244.0.10", "10.244.0.12"))))
                .next();
        ClusterRules v1Rules = v1.published();
        ClusterHead pinned = v2.apply(
                        List.of(new RollbackRequested(C, 7, 1, "alice", "bad endpoint", T)),
                        v -> v == 1 ? Optional.of(v1Rules) : Optional.empty())
                .next();
        assertThat(pinned.pin()).isNotNull();

        WhatIf.Outcome o =
                WhatIf.of(pinned, List.of(Fixtures.object(Fixtures.service("cart", "10.96.0.2"))), Action.APPLY, T);

        // Only the new Service: not the endpoint the pin holds back.
        assertThat(o.diff().fragments()).extracting(c -> c.key().unit().id()).containsOnly("shop/cart:http/TCP");
        assertThat(o.before()
                        .ruleSet("node-b", io.rulesync.model.cluster.IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .contains("10.244.0.12");
    }
}
