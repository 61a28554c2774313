package io.rulesync.model.wire;

import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterObject;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.Fingerprint;
import io.rulesync.model.event.Json;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder;
import io.rulesync.model.manifest.Problem;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.DispatchChain;
import io.rulesync.model.rules.FragmentKey;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesDiff;
import io.rulesync.model.rules.RulesSnapshot;
import io.rulesync.model.rules.Unit;
import io.rulesync.model.rules.Variant;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** Representative values of everything rulesync hashes, stores or sends, and their wire text. */
final class WireSamples {
    static final Instant T = Instant.parse("2026-11-29T17:00:00.123Z");
    /** Every character class the writer treats apart: quotes, backslash, C0 controls, DEL, non-ASCII, U+2028/9, a surrogate pair. */
    static final String NASTY =
            "q\"b\\s/ n\n r\r t\t b\b f\f nul\u0000 us\u001f del\u007f é ü € \u2028 \u2029 \uD83D\uDE00 <&>";

    /** What operator texts may hold (no control characters). */
    static final String PRINTABLE = "q\"b\\s/ é ü € \uD83D\uDE00 <&>";

    private WireSamples() {}

    static ClusterObject object(String yaml) {
        try {
            return ((ManifestDecoder.Decoded.Accepted) ManifestDecoder.decode(
                            ManifestReader.parse("t.yaml", yaml).get(0)))
                    .object();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Name to wire text, in a fixed order. */
    static Map<String, String> all() {
        Map<String, String> out = new LinkedHashMap<>();
        ClusterObject svc = object("""
                kind: Service
                metadata: {name: web, namespace: shop, annotations: {rulesync.io/ipvs-scheduler: lc}}
                spec:
                  type: LoadBalancer
                  clusterIPs: [10.96.0.1, "fd00::1"]
                  externalIPs: [1.2.3.4]
                  loadBalancerSourceRanges: [10.0.0.0/8]
                  externalTrafficPolicy: Local
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
        ClusterSettings settings = new ClusterSettings(
                List.of(IpFamily.IPV6, IpFamily.IPV4),
                List.of(Cidr.parse("10.244.0.0/16")),
                true,
                15,
                List.of(Cidr.parse("192.168.0.0/24")),
                "lc");
        ClusterEvent.ProblemsReported problems = ClusterEvent.ProblemsReported.of(
                "prod-eu",
                "files/é.yaml",
                List.of(
                        new Problem("files/é.yaml", "shop/web", "spec.ports[0]", "bad \"port\" ü €"),
                        new Problem("x", "", "", "")),
                T);
        out.put("event.upsert.service", EventCodec.encode(new ClusterEvent.ObjectUpserted("prod-eu", svc, "42", T)));
        out.put("event.upsert.slice", EventCodec.encode(new ClusterEvent.ObjectUpserted("prod-eu", slice, "43", T)));
        out.put("event.upsert.node", EventCodec.encode(new ClusterEvent.ObjectUpserted("prod-eu", node, "", T)));
        out.put(
                "event.delete",
                EventCodec.encode(new ClusterEvent.ObjectDeleted(
                        "prod-eu", new ObjectRef(ObjectKind.ENDPOINT_SLICE, "shop/web-1"), "44", T)));
        out.put(
                "event.sync",
                EventCodec.encode(
                        new ClusterEvent.SyncMarker("prod-eu", ObjectKind.SERVICE, Set.of("shop/web", "a/b"), T)));
        out.put("event.listing", EventCodec.encode(new ClusterEvent.ListingStarted("prod-eu", T)));
        out.put("event.settings", EventCodec.encode(new ClusterEvent.SettingsChanged("prod-eu", settings, T)));
        out.put(
                "event.digest",
                EventCodec.encode(new ClusterEvent.StateDigest(
                        "prod-eu",
                        Map.of(ObjectKind.SERVICE, Fingerprint.of(svc), ObjectKind.NODE, Fingerprint.of(node)),
                        Fingerprint.of(settings),
                        Fingerprint.of(problems),
                        T)));
        out.put(
                "event.digest.bare",
                EventCodec.encode(new ClusterEvent.StateDigest("prod-eu", Map.of(), null, null, T)));
        out.put("event.problems", EventCodec.encode(problems));
        out.put("event.problem-sync", EventCodec.encode(new ClusterEvent.ProblemSync("prod-eu", Set.of("b", "a"), T)));
        out.put(
                "event.rollback",
                EventCodec.encode(new ClusterEvent.RollbackRequested(
                        "prod-eu", 7, 41, "alice@example.org", "v42 broke \"checkout\"\nsee INC-9 – é", T)));
        out.put("event.resume", EventCodec.encode(new ClusterEvent.ResumeRequested("prod-eu", 8, "bob", PRINTABLE, T)));
        out.put("fingerprint.service", Fingerprint.of(svc).sum());
        out.put("fingerprint.slice", Fingerprint.of(slice).sum());
        out.put("fingerprint.settings", Fingerprint.of(settings).sum());
        out.put("fingerprint.problems", Fingerprint.of(problems).sum());
        out.put("resync", new ResyncRequest("prod-eu", NASTY, T).encode());
        out.put(
                "ack.applied",
                new NodeAck("shop", "node-a", 7, 7, NodeAck.Status.APPLIED, null, 12, 345, "iptables", T).toJson());
        out.put(
                "ack.failed",
                new NodeAck("shop", "node-a", 8, 7, NodeAck.Status.FAILED, NASTY, 5, 0, "ipvs", T).toJson());
        Map<String, Object> plain = new LinkedHashMap<>();
        plain.put("text", NASTY);
        plain.put("int", Integer.MIN_VALUE);
        plain.put("long", Long.MAX_VALUE);
        plain.put("yes", true);
        plain.put("no", false);
        plain.put("none", null);
        plain.put("list", Arrays.asList(1, "two", null, List.of(), Map.of()));
        out.put("json.values", Json.write(plain));
        out.put("json.control", Json.write(controls()));

        RulesDiff diff = diff();
        List<RulesDiff.FragmentChange> changes = new ArrayList<>(diff.fragments());
        changes.add(new RulesDiff.FragmentChange(
                new FragmentKey(IpFamily.IPV4, Unit.FIXED, Variant.ALL), fragment(5), null));
        List<RulesDiff.NodeChange> nodes = new ArrayList<>(diff.nodes());
        nodes.add(new RulesDiff.NodeChange("n3", "z3", null));
        RulesDelta delta = new RulesDelta("prod-eu", 4, 5, T, new RulesDiff(changes, nodes));
        out.put("delta", delta.toJson());
        List<String> parts = delta.toJsonParts(500);
        for (int i = 0; i < parts.size(); i++) {
            out.put("delta.part" + (i + 1), parts.get(i));
        }
        ClusterRules rules = diff.applyTo(ClusterRules.EMPTY);
        out.put("snapshot", new RulesSnapshot("prod-eu", 5, T, rules).toJson());
        out.put("snapshot.node", new RulesSnapshot("prod-eu", 5, T, rules.forNode("n1")).toJson());
        return out;
    }

    /** Every C0 control character, then the ones around the escaped ranges. */
    private static String controls() {
        StringBuilder sb = new StringBuilder();
        for (char c = 0; c < 0x20; c++) {
            sb.append(c);
        }
        return sb.append("\u007f\u0080\u009f\u00a0\u2027\u2028\u2029\u202a\ufeff\uffff")
                .toString();
    }

    static RuleFragment fragment(int i) {
        return new RuleFragment(
                Map.of(
                        DispatchChain.NAT_SERVICES,
                        List.of("-m comment --comment \"ns/s" + i + " cluster IP\" -d 10.0.0." + i + " -j KUBE-SVC-"
                                + i)),
                List.of(),
                List.of(new Chain("KUBE-SVC-" + i, List.of("-j KUBE-SEP-" + i))));
    }

    static RulesDiff diff() {
        List<RulesDiff.FragmentChange> changes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Unit u = Unit.of(new ServicePortName(new NamespacedName("ns", "s" + i), "", Protocol.TCP));
            changes.add(
                    new RulesDiff.FragmentChange(new FragmentKey(IpFamily.IPV4, u, Variant.ALL), null, fragment(i)));
        }
        changes.add(new RulesDiff.FragmentChange(
                new FragmentKey(IpFamily.IPV6, Unit.FIXED, new Variant("n1", "*")), null, fragment(9)));
        Map<String, String> zones = new TreeMap<>(Map.of("n1", "z1", "n2", ""));
        List<RulesDiff.NodeChange> nodes = new ArrayList<>();
        zones.forEach((n, z) -> nodes.add(new RulesDiff.NodeChange(n, null, z)));
        return new RulesDiff(changes, nodes);
    }
}
