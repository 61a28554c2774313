package io.rulesync.compiler.version;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.ManifestReader;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.Unit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterHeadTest {
    private static final Instant T = Instant.parse("2026-11-29T12:00:00Z");
    private static final String C = "demo-a";

    static ClusterObject obj(String yaml) {
        try {
            return ((ManifestDecoder.Decoded.Accepted) ManifestDecoder.decode(ManifestReader.parse("t", yaml).get(0))).object();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static ClusterEvent up(String yaml) {
        return new ObjectUpserted(C, obj(yaml), "1", T);
    }

    static final ClusterEvent NODE_A = up("kind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n");
    static final ClusterEvent NODE_B = up("kind: Node\nmetadata: {name: node-b}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.3}]}\n");
    static final ClusterEvent WEB = up("kind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.1, ports: [{name: http, port: 80}]}\n");

    static ClusterEvent slice(String... ips) {
        StringBuilder eps = new StringBuilder();
        for (String ip : ips) {
            eps.append("- {addresses: [").append(ip).append("], nodeName: node-a}\n");
        }
        return up("""
                kind: EndpointSlice
                apiVersion: discovery.k8s.io/v1
                metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                addressType: IPv4
                ports: [{name: http, port: 8080}]
                endpoints:
                """ + eps);
    }

    @Test
    void versionsAdvanceOnlyWhenSomeNodesRulesChange() {
        ClusterHead h = ClusterHead.empty(C);
        ClusterHead.Step s1 = h.apply(List.of(new SettingsChanged(C, ClusterSettings.DEFAULT, T), NODE_A, WEB, slice("10.244.0.10")));
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

        // A new node: its rules come into existence, so a version, but no fragment changes.
        ClusterHead.Step s3 = s2.next().apply(List.of(NODE_B));
        assertThat(s3.next().version()).isEqualTo(3);
        assertThat(s3.diff().fragments()).isEmpty();
        assertThat(s3.diff().nodes()).extracting(RulesDiff.NodeChange::node).containsExactly("node-b");
    }

    @Test
    void aSyncMarkerDropsWhatWasDeletedWhileNobodyWatched() {
        ClusterHead h = ClusterHead.empty(C).apply(List.of(NODE_A, WEB, slice("10.244.0.10"))).next();
        ClusterHead.Step s = h.apply(List.of(new SyncMarker(C, ObjectKind.SERVICE, Set.of(), T)));
        assertThat(s.changes().services()).extracting(Object::toString).containsExactly("shop/web");
        assertThat(s.next().published().fragments().keySet()).extracting(k -> k.unit()).containsOnly(Unit.FIXED);
        // A marker listing what exists changes nothing.
        assertThat(s.next().apply(List.of(new SyncMarker(C, ObjectKind.NODE, Set.of("node-a"), T))).newVersion()).isFalse();
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
                ClusterHead rebuilt = ClusterHead.rebuilt(C, seen, live.version(), live.published());
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
