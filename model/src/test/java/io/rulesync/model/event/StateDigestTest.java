package io.rulesync.model.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent.StateDigest;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Fingerprints and state digests: what the watcher and the compiler compare to find a lost event. */
class StateDigestTest {
    private static final Instant T = Instant.parse("2026-12-01T10:00:00Z");

    private static ClusterObject object(String yaml) {
        try {
            return ((ManifestDecoder.Decoded.Accepted) ManifestDecoder.decode(
                            ManifestReader.parse("t.yaml", yaml).get(0)))
                    .object();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Service service(String name, String ip, int port) {
        return (Service) object("kind: Service\nmetadata: {name: " + name + ", namespace: shop}\n"
                + "spec: {clusterIPs: [" + ip + "], ports: [{name: http, port: " + port + "}]}");
    }

    private static EndpointSlice slice(String service, String ip) {
        return (EndpointSlice) object("kind: EndpointSlice\napiVersion: discovery.k8s.io/v1\n"
                + "metadata: {name: " + service + "-1, namespace: shop, labels: {kubernetes.io/service-name: " + service
                + "}}\n"
                + "addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [" + ip
                + "], nodeName: a}]");
    }

    private static Node node(String name) {
        return (Node) object("kind: Node\nmetadata: {name: " + name
                + "}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.1}]}");
    }

    @Test
    void aFingerprintDoesNotDependOnOrderAndTakesObjectsOutAgain() {
        List<ClusterObject> objects = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            objects.add(service("s" + i, "10.96.0." + (i + 1), 80));
        }
        Fingerprint all = StateDigest.of(objects);
        for (long seed = 1; seed <= 20; seed++) {
            List<ClusterObject> shuffled = new ArrayList<>(objects);
            Collections.shuffle(shuffled, new Random(seed));
            assertThat(StateDigest.of(shuffled)).as("seed %d", seed).isEqualTo(all);
        }
        Fingerprint without = all.minus(Fingerprint.of(objects.get(7)));
        assertThat(without.count()).isEqualTo(49);
        assertThat(without)
                .isEqualTo(StateDigest.of(objects.subList(0, 7)).plus(StateDigest.of(objects.subList(8, 50))));
        assertThat(without.plus(Fingerprint.of(objects.get(7)))).isEqualTo(all);
    }

    @Test
    void sumsCarryAcrossTheirTwoHalvesBothWays() {
        Fingerprint f = new Fingerprint(1, 5, -1L); // low half all ones
        Fingerprint g = new Fingerprint(1, 0, 1);
        assertThat(f.plus(g)).isEqualTo(new Fingerprint(2, 6, 0));
        assertThat(f.plus(g).minus(g)).isEqualTo(f);
        assertThat(Fingerprint.parse(2, f.plus(g).sum())).isEqualTo(f.plus(g));
        assertThatThrownBy(() -> Fingerprint.parse(1, "xyz")).hasMessageContaining("32 lower-case hex digits");
    }

    @Test
    void anyChangeTheCompilerWouldFoldChangesTheFingerprint() {
        assertThat(Fingerprint.of(service("web", "10.96.0.1", 80)))
                .isEqualTo(Fingerprint.of(service("web", "10.96.0.1", 80)))
                .isNotEqualTo(Fingerprint.of(service("web", "10.96.0.1", 81)))
                .isNotEqualTo(Fingerprint.of(service("web", "10.96.0.2", 80)))
                .isNotEqualTo(Fingerprint.of(service("api", "10.96.0.1", 80)));
        assertThat(Fingerprint.of(ClusterSettings.DEFAULT))
                .isNotEqualTo(Fingerprint.of(
                        new ClusterSettings(ClusterSettings.DEFAULT.families(), List.of(), true, 14, List.of())));
    }

    @Test
    void aDigestSaysHowAStateDiffersFromWhatItDescribes() {
        Service web = service("web", "10.96.0.1", 80);
        Service api = service("api", "10.96.0.2", 80);
        EndpointSlice webSlice = slice("web", "10.244.0.5");
        ClusterState watcher = ClusterState.of(List.of(web, api), List.of(webSlice), List.of(node("a")));
        StateDigest d = new StateDigest(
                "shop",
                Map.of(
                        ObjectKind.SERVICE, StateDigest.of(watcher.services()),
                        ObjectKind.ENDPOINT_SLICE, StateDigest.of(watcher.endpointSlices()),
                        ObjectKind.NODE, StateDigest.of(watcher.nodes())),
                Fingerprint.of(ClusterSettings.DEFAULT),
                T);

        assertThat(d.differences(watcher, ClusterSettings.DEFAULT)).isEmpty();
        ClusterState missed = ClusterState.of(List.of(web), List.of(slice("web", "10.244.0.9")), List.of(node("a")));
        assertThat(d.differences(
                        missed,
                        new ClusterSettings(ClusterSettings.DEFAULT.families(), List.of(), true, 14, List.of())))
                .containsExactly(
                        "Services: 1 here, 2 at the watcher",
                        "EndpointSlices: 1 here and at the watcher, with different content",
                        "settings differ");

        // Kinds the watcher has not listed yet, and settings it has not published, are not compared.
        StateDigest partial =
                new StateDigest("shop", Map.of(ObjectKind.NODE, StateDigest.of(watcher.nodes())), null, T);
        assertThat(partial.differences(missed, ClusterSettings.DEFAULT)).isEmpty();
    }

    @Test
    void digestsSurviveTheWireAndForgedOnesAreRefused() {
        StateDigest d = new StateDigest(
                "shop",
                Map.of(
                        ObjectKind.SERVICE,
                        StateDigest.of(List.of(service("web", "10.96.0.1", 80))),
                        ObjectKind.NODE,
                        Fingerprint.EMPTY),
                Fingerprint.of(ClusterSettings.DEFAULT),
                T);
        String wire = EventCodec.encode(d);
        assertThat(EventCodec.decode(wire)).isEqualTo(new EventCodec.Decoded.Valid(d));

        String unknownKind = wire.replace("\"Node\"", "\"Pod\"");
        assertThat(EventCodec.decode(unknownKind)).isInstanceOf(EventCodec.Decoded.Invalid.class);
        assertThat(((EventCodec.Decoded.Invalid) EventCodec.decode(unknownKind)).reason())
                .contains("'Pod'");
        String badSum = wire.replaceFirst("\"sum\":\"[0-9a-f]+\"", "\"sum\":\"nothex\"");
        assertThat(((EventCodec.Decoded.Invalid) EventCodec.decode(badSum)).reason())
                .contains("sum");
        String negative = wire.replaceFirst("\"count\":1", "\"count\":-1");
        assertThat(((EventCodec.Decoded.Invalid) EventCodec.decode(negative)).reason())
                .contains("count");
    }

    @Test
    void resyncRequestsSurviveTheWireAndSayWhatIsWrongWithAForgedOne() {
        ResyncRequest r = new ResyncRequest("shop", "the log was replaced", T);
        assertThat(ResyncRequest.decode(r.encode())).isEqualTo(r);
        assertThat(new ResyncRequest("shop", "x".repeat(2000), T).reason()).hasSize(ResyncRequest.MAX_REASON);
        assertThatThrownBy(() -> ResyncRequest.decode(
                        "{\"cluster\":\"Shop!\",\"reason\":\"r\",\"requestedAt\":\"2026-12-01T10:00:00Z\"}"))
                .hasMessageContaining("cluster");
        assertThatThrownBy(() -> ResyncRequest.decode("[1]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() ->
                        ResyncRequest.decode("{\"cluster\":\"shop\",\"reason\":\"r\",\"requestedAt\":\"yesterday\"}"))
                .hasMessageContaining("not a resync request");
        assertThatThrownBy(() -> ResyncRequest.decode("{\"cluster\":\"shop\",\"cluster\":\"edge\",\"reason\":\"r\","
                        + "\"requestedAt\":\"2026-12-01T10:00:00Z\"}"))
                .hasMessageStartingWith("not a resync request: Duplicate Object property \"cluster\"");
        assertThatThrownBy(() -> ResyncRequest.decode("{\"cluster\":"))
                .hasMessageStartingWith("not a resync request: ");
        assertThatThrownBy(() -> ResyncRequest.decode(
                        "{\"cluster\":1,\"reason\":\"r\",\"requestedAt\":\"2026-12-01T10:00:00Z\"}"))
                .hasMessage("cluster, reason and requestedAt must be strings");
    }
}
