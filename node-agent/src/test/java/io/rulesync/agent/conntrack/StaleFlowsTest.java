package io.rulesync.agent.conntrack;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.compiler.cluster.ClusterCompiler;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.model.rules.RuleFragment;
import io.rulesync.model.rules.RuleSet;
import io.rulesync.model.rules.Unit;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stale UDP flows decided from compiled fragments, as kube-proxy's CleanStaleEntries decides them. */
class StaleFlowsTest {
    static final Unit DNS = Unit.parse("kube-system/dns:dns/UDP");

    /** The dns Service's fragment (a NodePort, UDP) with the given endpoints, compiled for node-a. */
    static RuleFragment dns(String... endpoints) throws Exception {
        return compile(endpoints).resolve("node-a", IpFamily.IPV4, DNS).orElseThrow();
    }

    /** node-a's whole rule set with the dns Service. */
    static RuleSet dnsRules(String... endpoints) throws Exception {
        return compile(endpoints).ruleSet("node-a", IpFamily.IPV4).orElseThrow();
    }

    private static ClusterRules compile(String... endpoints) throws Exception {
        StringBuilder yaml = new StringBuilder("""
                apiVersion: v1
                kind: Node
                metadata: {name: node-a}
                status: {addresses: [{type: InternalIP, address: 192.168.50.1}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: dns, namespace: kube-system}
                spec: {type: NodePort, clusterIP: 10.96.0.53, externalIPs: [198.51.100.53],
                       ports: [{name: dns, port: 53, protocol: UDP, nodePort: 30053}]}
                """);
        if (endpoints.length > 0) {
            yaml.append("""
                    ---
                    apiVersion: discovery.k8s.io/v1
                    kind: EndpointSlice
                    metadata: {name: dns-1, namespace: kube-system, labels: {kubernetes.io/service-name: dns}}
                    addressType: IPv4
                    ports: [{name: dns, port: 5353, protocol: UDP}]
                    endpoints:
                    """);
            for (String e : endpoints) {
                yaml.append("- {addresses: [").append(e).append("], nodeName: node-a}\n");
            }
        }
        return ClusterCompiler.compile(
                        ClusterManifests.fromDocuments(ManifestReader.parse("dns.yaml", yaml.toString())),
                        ClusterSettings.DEFAULT)
                .rules();
    }

    static List<String> calls(List<StaleFlows.Flush> flushes) {
        return flushes.stream()
                .map(f -> String.join(" ", f.arguments(IpFamily.IPV4)))
                .toList();
    }

    @Test
    void aRemovedEndpointsFlowsAreFlushedFromEveryServiceAddressAndNodePort() throws Exception {
        assertThat(calls(StaleFlows.between(
                        IpFamily.IPV4, DNS, dns("10.244.0.10", "10.244.0.11"), dns("10.244.0.10", "10.244.0.12"))))
                .containsExactlyInAnyOrder(
                        "-f ipv4 -p udp --orig-dst 10.96.0.53 --dst-nat 10.244.0.11",
                        "-f ipv4 -p udp --orig-dst 198.51.100.53 --dst-nat 10.244.0.11",
                        "-f ipv4 -p udp --dport 30053 --dst-nat 10.244.0.11");
    }

    @Test
    void aServiceGainingItsFirstEndpointFlushesItsRejectedFlows() throws Exception {
        assertThat(calls(StaleFlows.between(IpFamily.IPV4, DNS, dns(), dns("10.244.0.10"))))
                .containsExactlyInAnyOrder(
                        "-f ipv4 -p udp --orig-dst 10.96.0.53",
                        "-f ipv4 -p udp --orig-dst 198.51.100.53",
                        "-f ipv4 -p udp --dport 30053");
    }

    @Test
    void aRemovedServiceFlushesItsAddresses() throws Exception {
        assertThat(calls(StaleFlows.between(IpFamily.IPV4, DNS, dns("10.244.0.10"), RuleFragment.EMPTY)))
                .containsExactlyInAnyOrder(
                        "-f ipv4 -p udp --orig-dst 10.96.0.53", "-f ipv4 -p udp --orig-dst 198.51.100.53");
    }

    @Test
    void unchangedEndpointsAndTcpNeedNothing() throws Exception {
        assertThat(StaleFlows.between(IpFamily.IPV4, DNS, dns("10.244.0.10"), dns("10.244.0.10", "10.244.0.11")))
                .isEmpty();
        assertThat(StaleFlows.between(IpFamily.IPV4, Unit.parse("kube-system/dns:dns/TCP"), dns("10.244.0.10"), dns()))
                .isEmpty();
    }
}
