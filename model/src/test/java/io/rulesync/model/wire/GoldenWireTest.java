package io.rulesync.model.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.EventCodec;
import io.rulesync.model.event.ResyncRequest;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RulesDelta;
import io.rulesync.model.rules.RulesSnapshot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exact text rulesync writes for what it hashes, stores or sends, captured from the hand-written
 * writer that came before Jackson: events and deltas sit in Kafka topics and PostgreSQL, fingerprints
 * and fragment hashes are compared across versions, so a changed byte (key order, an escape, a
 * number's form) would read as a change of state.
 */
class GoldenWireTest {
    private static final Map<String, String> GOLDEN = Map.ofEntries(
            Map.entry(
                    "event.upsert.service",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"upsert\",\"kind\":\"Service\",\"key\":\"shop/web\",\"resourceVersion\":\"42\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"namespace\":\"shop\",\"name\":\"web\",\"annotations\":{\"rulesync.io/ipvs-scheduler\":\"lc\"}},\"spec\":{\"type\":\"LoadBalancer\",\"clusterIPs\":[\"10.96.0.1\",\"fd00::1\"],\"ports\":[{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,\"nodePort\":30080},{\"name\":\"b\",\"protocol\":\"UDP\",\"port\":53}],\"externalIPs\":[\"1.2.3.4\"],\"loadBalancerSourceRanges\":[\"10.0.0.0/8\"],\"externalTrafficPolicy\":\"Local\",\"internalTrafficPolicy\":\"Cluster\",\"sessionAffinity\":\"ClientIP\",\"sessionAffinityConfig\":{\"clientIP\":{\"timeoutSeconds\":10800}},\"healthCheckNodePort\":30000},\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"5.6.7.8\",\"ipMode\":\"VIP\"},{\"ip\":\"5.6.7.9\",\"ipMode\":\"Proxy\"}]}}},\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.upsert.slice",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"upsert\",\"kind\":\"EndpointSlice\",\"key\":\"shop/web-1\",\"resourceVersion\":\"43\",\"object\":{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{\"namespace\":\"shop\",\"name\":\"web-1\",\"labels\":{\"kubernetes.io/service-name\":\"web\"}},\"addressType\":\"IPv6\",\"ports\":[{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":8080},{\"name\":\"b\",\"protocol\":\"TCP\"}],\"endpoints\":[{\"addresses\":[\"fd00::10\"],\"conditions\":{\"ready\":false,\"serving\":true,\"terminating\":true},\"nodeName\":\"n1\",\"zone\":\"z1\",\"hints\":{\"forZones\":[{\"name\":\"z1\"}],\"forNodes\":[{\"name\":\"n1\"}]}}]},\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.upsert.node",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"upsert\",\"kind\":\"Node\",\"key\":\"n1\",\"resourceVersion\":\"\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{\"topology.kubernetes.io/zone\":\"z1\"}},\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"},{\"type\":\"ExternalIP\",\"address\":\"1.1.1.1\"}]}},\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.delete",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"delete\",\"kind\":\"EndpointSlice\",\"key\":\"shop/web-1\",\"resourceVersion\":\"44\",\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.sync",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"sync\",\"kind\":\"Service\",\"keys\":[\"a/b\",\"shop/web\"],\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.listing",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"listing\",\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.settings",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"settings\",\"settings\":{\"families\":[\"ipv4\",\"ipv6\"],\"clusterCIDRs\":[\"10.244.0.0/16\"],\"masqueradeAll\":true,\"masqueradeBit\":15,\"nodePortAddresses\":[\"192.168.0.0/24\"],\"ipvsScheduler\":\"lc\"},\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.digest",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"digest\",\"objects\":{\"Service\":{\"count\":1,\"sum\":\"882fc8deb8e4346ae3675200042a5dad\"},\"Node\":{\"count\":1,\"sum\":\"9c156aabe85ba0210dc90d8f6ac8546c\"}},\"settings\":\"69600f463bafff61081b6bc00bb7d982\",\"problems\":{\"count\":1,\"sum\":\"2f0075409927bc6a8cb2aebed664c2c5\"},\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.digest.bare",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"digest\",\"objects\":{},\"settings\":null,\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.problems",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"problems\",\"source\":\"files/\u00e9.yaml\",\"problems\":[{\"source\":\"files/\u00e9.yaml\",\"object\":\"shop/web\",\"field\":\"spec.ports[0]\",\"message\":\"bad \\\"port\\\" \u00fc \u20ac\"},{\"source\":\"x\",\"object\":\"\",\"field\":\"\",\"message\":\"\"}],\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.problem-sync",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"problem-sync\",\"sources\":[\"a\",\"b\"],\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.rollback",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"rollback\",\"actionId\":7,\"toVersion\":41,\"actor\":\"alice@example.org\",\"reason\":\"v42 broke \\\"checkout\\\"\\nsee INC-9 \u2013 \u00e9\",\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "event.resume",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"type\":\"resume\",\"actionId\":8,\"actor\":\"bob\",\"reason\":\"q\\\"b\\\\s/ \u00e9 \u00fc \u20ac \ud83d\ude00 <&>\",\"observedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry("fingerprint.service", "882fc8deb8e4346ae3675200042a5dad"),
            Map.entry("fingerprint.slice", "afc479151874e8a47a495c6b276b0a43"),
            Map.entry("fingerprint.settings", "69600f463bafff61081b6bc00bb7d982"),
            Map.entry("fingerprint.problems", "2f0075409927bc6a8cb2aebed664c2c5"),
            Map.entry(
                    "resync",
                    "{\"cluster\":\"prod-eu\",\"reason\":\"q\\\"b\\\\s/ n\\n r\\r t\\t b\\u0008 f\\u000c nul\\u0000 us\\u001f del\u007f \u00e9 \u00fc \u20ac \\u2028 \\u2029 \ud83d\ude00 <&>\",\"requestedAt\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "ack.applied",
                    "{\"v\":1,\"cluster\":\"shop\",\"node\":\"node-a\",\"version\":7,\"running\":7,\"status\":\"APPLIED\",\"durationMs\":12,\"ruleCount\":345,\"mode\":\"iptables\",\"at\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "ack.failed",
                    "{\"v\":1,\"cluster\":\"shop\",\"node\":\"node-a\",\"version\":8,\"running\":7,\"status\":\"FAILED\",\"error\":\"q\\\"b\\\\s/ n\\n r\\r t\\t b\\u0008 f\\u000c nul\\u0000 us\\u001f del\u007f \u00e9 \u00fc \u20ac \\u2028 \\u2029 \ud83d\ude00 <&>\",\"durationMs\":5,\"ruleCount\":0,\"mode\":\"ipvs\",\"at\":\"2026-11-29T17:00:00.123Z\"}"),
            Map.entry(
                    "json.values",
                    "{\"text\":\"q\\\"b\\\\s/ n\\n r\\r t\\t b\\u0008 f\\u000c nul\\u0000 us\\u001f del\u007f \u00e9 \u00fc \u20ac \\u2028 \\u2029 \ud83d\ude00 <&>\",\"int\":-2147483648,\"long\":9223372036854775807,\"yes\":true,\"no\":false,\"none\":null,\"list\":[1,\"two\",null,[],{}]}"),
            Map.entry(
                    "json.control",
                    "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008\\t\\n\\u000b\\u000c\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\u007f\u0080\u009f\u00a0\u2027\\u2028\\u2029\u202a\ufeff\uffff\""),
            Map.entry(
                    "delta",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":1,\"parts\":1,\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s0:/TCP\",\"variant\":\"*\",\"hash\":\"d65cd79a5b192944aa42794de068ee568fe7f07553244563044a8eaa00865c9d\",\"rules\":\"*nat\\n:KUBE-SVC-0\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s0 cluster IP\\\" -d 10.0.0.0 -j KUBE-SVC-0\\n-A KUBE-SVC-0 -j KUBE-SEP-0\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s1:/TCP\",\"variant\":\"*\",\"hash\":\"25608a643428d0cd8cacd2f64fc5dfbafde45e20d94922ab9a5ddeb115a86560\",\"rules\":\"*nat\\n:KUBE-SVC-1\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s1 cluster IP\\\" -d 10.0.0.1 -j KUBE-SVC-1\\n-A KUBE-SVC-1 -j KUBE-SEP-1\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s2:/TCP\",\"variant\":\"*\",\"hash\":\"0199c259d6faf70e1452afafefb270629de20f253873fcf90361b4a8a00168ef\",\"rules\":\"*nat\\n:KUBE-SVC-2\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s2 cluster IP\\\" -d 10.0.0.2 -j KUBE-SVC-2\\n-A KUBE-SVC-2 -j KUBE-SEP-2\\n\"},{\"family\":\"ipv6\",\"unit\":\"~fixed\",\"variant\":\"node=n1\",\"hash\":\"2af705d3f6f84247917dfc39e83e4ee4a63782c858e1f470feea3d8871c6a836\",\"rules\":\"*nat\\n:KUBE-SVC-9\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s9 cluster IP\\\" -d 10.0.0.9 -j KUBE-SVC-9\\n-A KUBE-SVC-9 -j KUBE-SEP-9\\n\"},{\"family\":\"ipv4\",\"unit\":\"~fixed\",\"variant\":\"*\",\"removed\":true}],\"nodes\":[{\"node\":\"n1\",\"zone\":\"z1\"},{\"node\":\"n2\",\"zone\":\"\"},{\"node\":\"n3\",\"removed\":true}]}"),
            Map.entry(
                    "delta.part1",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":1,\"parts\":5,\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s0:/TCP\",\"variant\":\"*\",\"hash\":\"d65cd79a5b192944aa42794de068ee568fe7f07553244563044a8eaa00865c9d\",\"rules\":\"*nat\\n:KUBE-SVC-0\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s0 cluster IP\\\" -d 10.0.0.0 -j KUBE-SVC-0\\n-A KUBE-SVC-0 -j KUBE-SEP-0\\n\"}],\"nodes\":[{\"node\":\"n1\",\"zone\":\"z1\"},{\"node\":\"n2\",\"zone\":\"\"},{\"node\":\"n3\",\"removed\":true}]}"),
            Map.entry(
                    "delta.part2",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":2,\"parts\":5,\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s1:/TCP\",\"variant\":\"*\",\"hash\":\"25608a643428d0cd8cacd2f64fc5dfbafde45e20d94922ab9a5ddeb115a86560\",\"rules\":\"*nat\\n:KUBE-SVC-1\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s1 cluster IP\\\" -d 10.0.0.1 -j KUBE-SVC-1\\n-A KUBE-SVC-1 -j KUBE-SEP-1\\n\"}],\"nodes\":[]}"),
            Map.entry(
                    "delta.part3",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":3,\"parts\":5,\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s2:/TCP\",\"variant\":\"*\",\"hash\":\"0199c259d6faf70e1452afafefb270629de20f253873fcf90361b4a8a00168ef\",\"rules\":\"*nat\\n:KUBE-SVC-2\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s2 cluster IP\\\" -d 10.0.0.2 -j KUBE-SVC-2\\n-A KUBE-SVC-2 -j KUBE-SEP-2\\n\"}],\"nodes\":[]}"),
            Map.entry(
                    "delta.part4",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":4,\"parts\":5,\"fragments\":[{\"family\":\"ipv6\",\"unit\":\"~fixed\",\"variant\":\"node=n1\",\"hash\":\"2af705d3f6f84247917dfc39e83e4ee4a63782c858e1f470feea3d8871c6a836\",\"rules\":\"*nat\\n:KUBE-SVC-9\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s9 cluster IP\\\" -d 10.0.0.9 -j KUBE-SVC-9\\n-A KUBE-SVC-9 -j KUBE-SEP-9\\n\"}],\"nodes\":[]}"),
            Map.entry(
                    "delta.part5",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"base\":4,\"target\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"part\":5,\"parts\":5,\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"~fixed\",\"variant\":\"*\",\"removed\":true}],\"nodes\":[]}"),
            Map.entry(
                    "snapshot",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"version\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s0:/TCP\",\"variant\":\"*\",\"hash\":\"d65cd79a5b192944aa42794de068ee568fe7f07553244563044a8eaa00865c9d\",\"rules\":\"*nat\\n:KUBE-SVC-0\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s0 cluster IP\\\" -d 10.0.0.0 -j KUBE-SVC-0\\n-A KUBE-SVC-0 -j KUBE-SEP-0\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s1:/TCP\",\"variant\":\"*\",\"hash\":\"25608a643428d0cd8cacd2f64fc5dfbafde45e20d94922ab9a5ddeb115a86560\",\"rules\":\"*nat\\n:KUBE-SVC-1\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s1 cluster IP\\\" -d 10.0.0.1 -j KUBE-SVC-1\\n-A KUBE-SVC-1 -j KUBE-SEP-1\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s2:/TCP\",\"variant\":\"*\",\"hash\":\"0199c259d6faf70e1452afafefb270629de20f253873fcf90361b4a8a00168ef\",\"rules\":\"*nat\\n:KUBE-SVC-2\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s2 cluster IP\\\" -d 10.0.0.2 -j KUBE-SVC-2\\n-A KUBE-SVC-2 -j KUBE-SEP-2\\n\"},{\"family\":\"ipv6\",\"unit\":\"~fixed\",\"variant\":\"node=n1\",\"hash\":\"2af705d3f6f84247917dfc39e83e4ee4a63782c858e1f470feea3d8871c6a836\",\"rules\":\"*nat\\n:KUBE-SVC-9\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s9 cluster IP\\\" -d 10.0.0.9 -j KUBE-SVC-9\\n-A KUBE-SVC-9 -j KUBE-SEP-9\\n\"}],\"nodes\":[{\"node\":\"n1\",\"zone\":\"z1\"},{\"node\":\"n2\",\"zone\":\"\"}]}"),
            Map.entry(
                    "snapshot.node",
                    "{\"v\":1,\"cluster\":\"prod-eu\",\"version\":5,\"createdAt\":\"2026-11-29T17:00:00.123Z\",\"fragments\":[{\"family\":\"ipv4\",\"unit\":\"ns/s0:/TCP\",\"variant\":\"*\",\"hash\":\"d65cd79a5b192944aa42794de068ee568fe7f07553244563044a8eaa00865c9d\",\"rules\":\"*nat\\n:KUBE-SVC-0\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s0 cluster IP\\\" -d 10.0.0.0 -j KUBE-SVC-0\\n-A KUBE-SVC-0 -j KUBE-SEP-0\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s1:/TCP\",\"variant\":\"*\",\"hash\":\"25608a643428d0cd8cacd2f64fc5dfbafde45e20d94922ab9a5ddeb115a86560\",\"rules\":\"*nat\\n:KUBE-SVC-1\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s1 cluster IP\\\" -d 10.0.0.1 -j KUBE-SVC-1\\n-A KUBE-SVC-1 -j KUBE-SEP-1\\n\"},{\"family\":\"ipv4\",\"unit\":\"ns/s2:/TCP\",\"variant\":\"*\",\"hash\":\"0199c259d6faf70e1452afafefb270629de20f253873fcf90361b4a8a00168ef\",\"rules\":\"*nat\\n:KUBE-SVC-2\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s2 cluster IP\\\" -d 10.0.0.2 -j KUBE-SVC-2\\n-A KUBE-SVC-2 -j KUBE-SEP-2\\n\"},{\"family\":\"ipv6\",\"unit\":\"~fixed\",\"variant\":\"node=n1\",\"hash\":\"2af705d3f6f84247917dfc39e83e4ee4a63782c858e1f470feea3d8871c6a836\",\"rules\":\"*nat\\n:KUBE-SVC-9\\n-A KUBE-SERVICES -m comment --comment \\\"ns/s9 cluster IP\\\" -d 10.0.0.9 -j KUBE-SVC-9\\n-A KUBE-SVC-9 -j KUBE-SEP-9\\n\"}],\"nodes\":[{\"node\":\"n1\",\"zone\":\"z1\"}]}"));

    @Test
    void everyWireFormIsByteForByteWhatItWas() {
        Map<String, String> now = WireSamples.all();
        assertThat(now.keySet()).containsExactlyInAnyOrderElementsOf(GOLDEN.keySet());
        now.forEach((name, text) -> assertThat(text).as(name).isEqualTo(GOLDEN.get(name)));
    }

    @Test
    void theGoldenTextsReadBack() {
        for (Map.Entry<String, String> e : GOLDEN.entrySet()) {
            if (e.getKey().startsWith("event.")) {
                assertThat(EventCodec.decode(e.getValue())).as(e.getKey()).isInstanceOf(EventCodec.Decoded.Valid.class);
            }
        }
        assertThat(ResyncRequest.decode(GOLDEN.get("resync")).reason()).isEqualTo(WireSamples.NASTY);
        assertThat(NodeAck.fromJson(GOLDEN.get("ack.failed")).error()).isEqualTo(WireSamples.NASTY);
        assertThat(NodeAck.fromJson(GOLDEN.get("ack.applied")).toJson()).isEqualTo(GOLDEN.get("ack.applied"));
        RulesDelta delta = RulesDelta.fromJson(GOLDEN.get("delta"));
        assertThat(delta.toJson()).isEqualTo(GOLDEN.get("delta"));
        assertThat(RulesDelta.fromJsonParts(List.of(
                                GOLDEN.get("delta.part5"),
                                GOLDEN.get("delta.part2"),
                                GOLDEN.get("delta.part4"),
                                GOLDEN.get("delta.part1"),
                                GOLDEN.get("delta.part3")))
                        .toJson())
                .isEqualTo(GOLDEN.get("delta"));
        RulesSnapshot snapshot = RulesSnapshot.fromJson(GOLDEN.get("snapshot"));
        assertThat(snapshot.rules()).isEqualTo(WireSamples.diff().applyTo(ClusterRules.EMPTY));
        assertThat(snapshot.toJson()).isEqualTo(GOLDEN.get("snapshot"));
        assertThat(RulesSnapshot.fromJson(GOLDEN.get("snapshot.node")).toJson()).isEqualTo(GOLDEN.get("snapshot.node"));
    }
}
