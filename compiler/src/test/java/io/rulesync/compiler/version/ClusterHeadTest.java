package io.rulesync.compiler.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.nftables.NftPart;
import io.rulesync.model.rules.Lineage;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterHeadTest {
    private static final Instant T = Fixtures.T;
    private static final String C = "demo-a";

    static ClusterEvent up(String yaml) {
        return Fixtures.upsert(C, yaml);
    }

    static final ClusterEvent NODE_A = up(Fixtures.node("node-a", "192.168.0.2"));
    static final ClusterEvent NODE_B = up(Fixtures.node("node-b", "192.168.0.3"));
    static final ClusterEvent WEB = up(Fixtures.service("web", "10.96.0.1"));

    static ClusterEvent slice(String... ips) {
        return up(Fixtures.slice("web", "node-a", ips));
    }

    @Test
    void versionsAdvanceOnlyWhenSomeNodesRulesChange() {
        ClusterHead h = ClusterHead.empty(C);
        ClusterHead.Step s1 =
                h.apply(List.of(new SettingsChanged(C, ClusterSettings.DEFAULT, T), NODE_A, WEB, slice("10.244.0.10")));
        assertThat(s1.newVersion()).isTrue();
        assertThat(s1.next().version()).isEqualTo(1);

        // The same facts again: nothing new.
        ClusterHead.Step again = s1.next().apply(List.of(NODE_A, WEB, slice("10.244.0.10")));
        assertThat(again.newVersion()).isFalse();
        assertThat(again.next().version()).isEqualTo(1);

        // One endpoint more: one unit changes, version 2.
        ClusterHead.Step s2 = again.next().apply(List.of(slice("10.244.0.10", "10.244.0.11")));
        assertThat(s2.next().version()).isEqualTo(2);
        assertThat(s2.diff().fragments()).extracting(c -> c.key().unit().id()).containsOnly("shop/web:http/TCP");
        assertThat(s2.diff().nodes()).isEmpty();

        // A new node: its rules come into existence, so a version. Only the fixed unit's IPVS and nftables
        // parts change (they list the nodes' addresses); every iptables rule stays as it was.
        ClusterHead.Step s3 = s2.next().apply(List.of(NODE_B));
        assertThat(s3.next().version()).isEqualTo(3);
        assertThat(s3.diff().fragments()).extracting(c -> c.key().unit()).containsOnly(Unit.FIXED);
        for (RulesDiff.FragmentChange c : s3.diff().fragments()) {
            assertThat(c.after().withIpvs(IpvsPart.EMPTY).withNftables(NftPart.NONE))
                    .isEqualTo(c.before().withIpvs(IpvsPart.EMPTY).withNftables(NftPart.NONE));
            assertThat(c.after().ipvs().nodes())
                    .extracting(IpvsPart.NodeAddresses::node)
                    .containsExactly("node-a", "node-b");
            assertThat(((NftPart.Fixed) c.after().nftables()).nodes())
                    .extracting(NftPart.NodePorts::node)
                    .containsExactly("node-a", "node-b");
        }
        assertThat(s3.diff().nodes()).extracting(RulesDiff.NodeChange::node).containsExactly("node-b");
    }

    /**
     * Each version's lineage chains from its parent's over what it changed: the same events make the same history (a
     * compiler that replays them after a restore makes the versions the nodes already run), other events another one.
     */
    @Test
    void eachVersionsLineageChainsFromItsParentsOverWhatItChanged() {
        ClusterHead.Step s1 = ClusterHead.empty(C).apply(List.of(NODE_A, WEB, slice("10.244.0.10")));
        ClusterHead.Step s2 = s1.next().apply(List.of(slice("10.244.0.11")));
        assertThat(ClusterHead.empty(C).lineage()).isEqualTo(Lineage.UNKNOWN);
        assertThat(s1.next().lineage()).isEqualTo(Lineage.next(Lineage.UNKNOWN, 1, s1.diff()));
        assertThat(s2.next().lineage()).isEqualTo(Lineage.next(s1.next().lineage(), 2, s2.diff()));
        assertThat(s2.next().apply(List.of(slice("10.244.0.11"))).next().lineage())
                .as("no version, the same lineage")
                .isEqualTo(s2.next().lineage());

        ClusterHead replayed = ClusterHead.empty(C)
                .apply(List.of(NODE_A, WEB, slice("10.244.0.10")))
                .next()
                .apply(List.of(slice("10.244.0.11")))
                .next();
        assertThat(replayed.lineage()).isEqualTo(s2.next().lineage());
        ClusterHead other = s1.next().apply(List.of(slice("10.244.0.12"))).next();
        assertThat(other.version()).isEqualTo(2);
        assertThat(other.lineage()).isNotEqualTo(s2.next().lineage());
        assertThat(ClusterHead.rebuilt(
                                C,
                                List.of(NODE_A, WEB, slice("10.244.0.11")),
                                2,
                                s2.next().published(),
                                null,
                                s2.next().lineage())
                        .apply(List.of(slice("10.244.0.13")))
                        .next()
                        .lineage())
                .isEqualTo(Lineage.next(
                        s2.next().lineage(),
                        3,
                        s2.next().apply(List.of(slice("10.244.0.13"))).diff()));
    }

    @Test
    void aSyncMarkerDropsWhatWasDeletedWhileNobodyWatched() {
        ClusterHead h = ClusterHead.empty(C)
                .apply(List.of(NODE_A, WEB, slice("10.244.0.10")))
                .next();
        ClusterHead.Step s = h.apply(List.of(new SyncMarker(C, ObjectKind.SERVICE, Set.of(), T)));
        assertThat(s.changes().services()).extracting(Object::toString).containsExactly("shop/web");
        assertThat(s.next().published().fragments().keySet())
                .extracting(k -> k.unit())
                .containsOnly(Unit.FIXED);
        // A marker listing what exists changes nothing.
        assertThat(s.next()
                        .apply(List.of(new SyncMarker(C, ObjectKind.NODE, Set.of("node-a"), T)))
                        .newVersion())
                .isFalse();
    }

    /**
     * A rebuilt head whose stored rules are not what today's compiler makes of the same events (as an older
     * compiler's would be) is due a version of its own with exactly that difference; after it, or while pinned,
     * or when they agree, none.
     */
    @Test
    void aHeadThatTodaysCompilerCompilesDifferentlyIsDueAVersionWithExactlyThatDifference() {
        List<ClusterEvent> events = List.of(NODE_A, WEB, slice("10.244.0.10"));
        ClusterHead today = ClusterHead.empty(C).apply(events).next();
        // "An older compiler" wrote the rules of another endpoint for the same events.
        ClusterHead older = ClusterHead.empty(C)
                .apply(List.of(NODE_A, WEB, slice("10.244.0.99")))
                .next();
        ClusterHead rebuilt = ClusterHead.rebuilt(C, events, 1, older.published(), null, Lineage.UNKNOWN);

        ClusterHead.Step step = rebuilt.recompiled().orElseThrow();
        assertThat(step.newVersion()).isTrue();
        assertThat(step.next().version()).isEqualTo(2);
        assertThat(step.next().published()).isEqualTo(today.published());
        assertThat(step.diff()).isEqualTo(RulesDiff.between(older.published(), today.published(), null));
        assertThat(step.diff().fragments()).extracting(c -> c.key().unit().id()).containsOnly("shop/web:http/TCP");
        assertThat(step.next().recompiled()).isEmpty();

        assertThat(ClusterHead.rebuilt(C, events, 1, today.published(), null, Lineage.UNKNOWN)
                        .recompiled())
                .isEmpty();
        assertThat(ClusterHead.rebuilt(C, events, 1, older.published(), new ClusterHead.Pin(7, 1), Lineage.UNKNOWN)
                        .recompiled())
                .isEmpty();
        assertThat(ClusterHead.rebuilt(C, List.of(), 0, older.published(), null, Lineage.UNKNOWN)
                        .recompiled())
                .isEmpty();
    }

    @Test
    void aRebuiltHeadContinuesExactlyLikeOneThatNeverStopped() {
        List<List<ClusterEvent>> batches = List.of(
                List.of(NODE_A, WEB),
                List.of(slice("10.244.0.10")),
                List.of(NODE_B, slice("10.244.0.10", "10.244.0.12")),
                List.of(new ObjectDeleted(C, new ObjectRef(ObjectKind.NODE, "node-b"), "9", T)),
                List.of(slice("10.244.0.13")));
        ClusterHead live = ClusterHead.empty(C);
        List<ClusterEvent> seen = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            if (i == 3) {
                // "Restart": rebuild from the stored events and the stored head version.
                ClusterHead rebuilt =
                        ClusterHead.rebuilt(C, seen, live.version(), live.published(), live.pin(), live.lineage());
                assertThat(rebuilt.pendingDiff().isEmpty()).isTrue();
                live = rebuilt;
            }
            live = live.apply(batches.get(i)).next();
            seen.addAll(batches.get(i));
        }
        ClusterHead uninterrupted = ClusterHead.empty(C);
        for (List<ClusterEvent> b : batches) {
            uninterrupted = uninterrupted.apply(b).next();
        }
        assertThat(live).isEqualTo(uninterrupted);
        assertThat(live.version()).isEqualTo(5);
    }
}
