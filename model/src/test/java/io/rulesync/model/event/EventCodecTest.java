package io.rulesync.model.event;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ClusterEvent.ObjectUpserted;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterEvent.SyncMarker;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.Problem;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EventCodecTest {
    private static final Instant T = Instant.parse("2026-11-29T17:00:00.123Z");

    private static ClusterObject object(String yaml) throws Exception {
        return ((ManifestDecoder.Decoded.Accepted) ManifestDecoder.decode(
                        ManifestReader.parse("t.yaml", yaml).get(0)))
                .object();
    }

    private static ClusterEvent roundTrip(ClusterEvent e) {
        EventCodec.Decoded d = EventCodec.decode(EventCodec.encode(e));
        assertThat(d).isInstanceOf(EventCodec.Decoded.Valid.class);
        return ((EventCodec.Decoded.Valid) d).event();
    }

    @Test
    void everyEventTypeSurvivesTheWire() throws Exception {
        ClusterObject svc = object("""
                kind: Service
                metadata: {name: web, namespace: shop, labels: {service.kubernetes.io/service-proxy-name: x}, annotations: {rulesync.io/ipvs-scheduler: lc}}
                spec:
                  type: LoadBalancer
                  clusterIPs: [10.96.0.1, "fd00::1"]
                  externalIPs: [1.2.3.4]
                  loadBalancerSourceRanges: [10.0.0.0/8]
                  externalTrafficPolicy: Local
                  internalTrafficPolicy: Local
                  sessionAffinity: ClientIP
                  healthCheckNodePort: 30000
                  ports: [{name: a, port: 80, nodePort: 30080}, {name: b, port: 53, protocol: UDP}]
                status: {loadBalancer: {ingress: [{ip: 5.6.7.8}, {ip: 5.6.7.9, ipMode: Proxy}]}}
                """);
        ClusterObject slice = object("""
                kind: EndpointSlice
                apiVersion: discovery.k8s.io/v1
                metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                addressType: IPv6
                ports: [{name: a, port: 8080}, {name: b}]
                endpoints:
                - addresses: ["fd00::10"]
                  conditions: {ready: false, serving: true, terminating: true}
                  nodeName: n1
                  zone: z1
                  hints: {forZones: [{name: z1}], forNodes: [{name: n1}]}
                """);
        ClusterObject node = object("""
                kind: Node
                metadata: {name: n1, labels: {topology.kubernetes.io/zone: z1}}
                status: {addresses: [{type: InternalIP, address: 10.0.0.1}, {type: ExternalIP, address: 1.1.1.1}]}
                """);
        for (ClusterObject o : List.of(svc, slice, node)) {
            ClusterEvent e = new ObjectUpserted("prod-eu", o, "42", T);
            assertThat(roundTrip(e)).isEqualTo(e);
        }
        List<ClusterEvent> others = List.of(
                new ObjectDeleted("prod-eu", new ObjectRef(ObjectKind.ENDPOINT_SLICE, "shop/web-1"), "43", T),
                new SyncMarker("prod-eu", ObjectKind.SERVICE, Set.of("shop/web", "a/b"), T),
                new SettingsChanged(
                        "prod-eu",
                        new ClusterSettings(
                                List.of(IpFamily.IPV6, IpFamily.IPV4),
                                List.of(Cidr.parse("10.244.0.0/16")),
                                true,
                                15,
                                List.of(Cidr.parse("192.168.0.0/24")),
                                "lc"),
                        T),
                new ClusterEvent.RollbackRequested(
                        "prod-eu", 7, 41, "alice@example.org", "v42 broke \"checkout\"\nsee INC-9", T),
                new ClusterEvent.ResumeRequested("prod-eu", 8, "bob", "fixed", T),
                new ClusterEvent.ProblemsReported(
                        "prod-eu",
                        "manifests/shop/web.yaml",
                        List.of(
                                new Problem(
                                        "manifests/shop/web.yaml (document 2)",
                                        "Service shop/web",
                                        "spec.ports[0].port",
                                        "0 is out of range (1-65535)"),
                                new Problem(
                                        "manifests/shop/web.yaml", "", "", "not valid YAML or JSON: \"quoted\" \\x0a")),
                        T),
                new ClusterEvent.ProblemsReported("prod-eu", "Node n1", List.of(), T),
                new ClusterEvent.ProblemSync("prod-eu", Set.of("manifests/a.yaml", "Node n1"), T),
                new ClusterEvent.ProblemSync("prod-eu", Set.of(), T),
                new ClusterEvent.StateDigest(
                        "prod-eu",
                        java.util.Map.of(ObjectKind.NODE, Fingerprint.EMPTY),
                        null,
                        Fingerprint.parse(2, "0123456789abcdef0123456789abcdef"),
                        T));
        for (ClusterEvent e : others) {
            assertThat(roundTrip(e)).isEqualTo(e);
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "not json at all {",
                "[1,2]",
                "{\"v\":2,\"cluster\":\"c\",\"type\":\"delete\",\"kind\":\"Service\",\"key\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"Bad Cluster\",\"type\":\"delete\",\"kind\":\"Service\",\"key\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"delete\",\"kind\":\"Pod\",\"key\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"delete\",\"kind\":\"Service\",\"key\":\"a/b\",\"observedAt\":\"yesterday\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"upsert\",\"kind\":\"Service\",\"key\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\","
                        + "\"object\":{\"kind\":\"Service\",\"metadata\":{\"name\":\"b\",\"namespace\":\"a\"},\"spec\":{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":0}]}}}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"upsert\",\"kind\":\"Service\",\"key\":\"a/other\",\"observedAt\":\"2026-11-29T17:00:00Z\","
                        + "\"object\":{\"kind\":\"Service\",\"metadata\":{\"name\":\"b\",\"namespace\":\"a\"},\"spec\":{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":80}]}}}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"sync\",\"kind\":\"Service\",\"keys\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"sync\",\"kind\":\"Service\",\"keys\":[\"a/b -j ACCEPT\"],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"rename\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"rollback\",\"actionId\":1,\"toVersion\":0,\"actor\":\"a\",\"reason\":\"r\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"rollback\",\"actionId\":1,\"toVersion\":\"3\",\"actor\":\"a\",\"reason\":\"r\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"rollback\",\"actionId\":0,\"toVersion\":3,\"actor\":\"a\",\"reason\":\"r\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"resume\",\"actionId\":1,\"actor\":\"a\",\"reason\":\" \",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"resume\",\"actionId\":1,\"actor\":\"a\\u0007\",\"reason\":\"r\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"\",\"problems\":[],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"a.yaml\\nforged line\",\"problems\":[],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"a.yaml\",\"problems\":[{\"source\":\"a.yaml\",\"object\":\"\","
                        + "\"field\":\"\",\"message\":\"bad\\u001b[31m\"}],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"a.yaml\",\"problems\":[{\"source\":\"a.yaml\"}],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"a.yaml\",\"problems\":\"broken\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"problem-sync\",\"sources\":[\"a\\u0000\"],\"observedAt\":\"2026-11-29T17:00:00Z\"}",
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"digest\",\"objects\":{},\"problems\":\"x\",\"observedAt\":\"2026-11-29T17:00:00Z\"}",
            })
    void refusesWithAReason(String json) {
        EventCodec.Decoded d = EventCodec.decode(json);
        assertThat(d)
                .isInstanceOfSatisfying(
                        EventCodec.Decoded.Invalid.class,
                        i -> assertThat(i.reason()).isNotBlank());
    }

    @Test
    void aNodeTravelsWithAllItsLabels() throws Exception {
        ClusterObject node = object("""
                kind: Node
                metadata: {name: n1, labels: {rollout.example.com/wave: canary, topology.kubernetes.io/zone: z1}}
                status: {addresses: [{type: InternalIP, address: 10.0.0.1}]}
                """);
        ClusterEvent e = new ObjectUpserted("prod-eu", node, "7", T);
        assertThat(roundTrip(e)).isEqualTo(e);
        // Sorted by key whatever the order read: the wire form is fingerprinted, so the same node must encode the same.
        assertThat(EventCodec.encode(e))
                .contains(
                        "\"labels\":{\"rollout.example.com/wave\":\"canary\",\"topology.kubernetes.io/zone\":\"z1\"}");
    }

    @Test
    void aReportOfTooManyProblemsIsRefused() {
        String one = "{\"source\":\"a.yaml\",\"object\":\"\",\"field\":\"\",\"message\":\"m\"}";
        String json = "{\"v\":1,\"cluster\":\"c\",\"type\":\"problems\",\"source\":\"a.yaml\",\"problems\":["
                + String.join(",", java.util.Collections.nCopies(101, one))
                + "],\"observedAt\":\"2026-11-29T17:00:00Z\"}";
        assertThat(EventCodec.decode(json))
                .isInstanceOfSatisfying(
                        EventCodec.Decoded.Invalid.class,
                        i -> assertThat(i.reason()).isEqualTo("problems: 101 are more than 100"));
    }

    @Test
    void aNulInAnyTextIsRefused() {
        // Escaped, it is valid JSON; decoded, no PostgreSQL text column could store it, and its batch would fail for
        // ever.
        EventCodec.Decoded d = EventCodec.decode("{\"v\":1,\"cluster\":\"c\",\"type\":\"delete\",\"kind\":\"Service\","
                + "\"key\":\"shop/web\",\"resourceVersion\":\"12\\u0000\",\"observedAt\":\"2026-11-29T17:00:00Z\"}");
        assertThat(d)
                .isInstanceOfSatisfying(
                        EventCodec.Decoded.Invalid.class,
                        i -> assertThat(i.reason()).isEqualTo("resourceVersion: contains a NUL character (\\u0000)"));
    }

    @Test
    void anOlderDigestWithoutProblemsStillReads() {
        EventCodec.Decoded d = EventCodec.decode("{\"v\":1,\"cluster\":\"c\",\"type\":\"digest\",\"objects\":{},"
                + "\"settings\":null,\"observedAt\":\"2026-11-29T17:00:00Z\"}");
        assertThat(((ClusterEvent.StateDigest) ((EventCodec.Decoded.Valid) d).event()).problems())
                .isNull();
    }

    @Test
    void anInvalidObjectIsRefusedWithTheFieldThatIsWrong() {
        EventCodec.Decoded d = EventCodec.decode(
                "{\"v\":1,\"cluster\":\"c\",\"type\":\"upsert\",\"kind\":\"Service\","
                        + "\"key\":\"a/b\",\"observedAt\":\"2026-11-29T17:00:00Z\",\"object\":{\"kind\":\"Service\","
                        + "\"metadata\":{\"name\":\"b\",\"namespace\":\"a\"},\"spec\":{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":99999}]}}}");
        assertThat(((EventCodec.Decoded.Invalid) d).reason())
                .isEqualTo("Service a/b: spec.ports[0].port: 99999 is out of range (1-65535)");
    }
}
