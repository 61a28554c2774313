package io.rulesync.compiler.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** The cluster the kernel tests compile for a {@link NetnsLab}, whatever the mode, and how they read the probes' answers. */
final class KernelTestCluster {
    private KernelTestCluster() {}

    /** The cluster below, decoded. */
    static ClusterState state(NetnsLab lab) throws Exception {
        return ClusterManifests.fromDocuments(ManifestReader.parse("kernel-test.yaml", manifests(lab)));
    }

    /**
     * The cluster: node-a is the node under test. pod0, pod1 and pod3 run on node-a, pod2 on node-b;
     * pod3 is not ready; pod4 is an ordinary client pod.
     */
    static String manifests(NetnsLab lab) {
        String nodes = """
                apiVersion: v1
                kind: Node
                metadata: {name: node-a}
                status: {addresses: [{type: InternalIP, address: %s}, {type: InternalIP, address: "%s"}]}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: node-b}
                status: {addresses: [{type: InternalIP, address: 192.168.50.11}]}
                """.formatted(lab.nodeIPv4(), lab.nodeIPv6());
        return nodes
                + service(lab, "web", "10.96.0.10", "", "", List.of(0, 1, 2), List.of(3))
                + service(lab, "sticky", "10.96.0.20", "sessionAffinity: ClientIP", "", List.of(0, 1, 2), List.of())
                + service(
                        lab, "web-np", "10.96.0.11", "type: NodePort", "nodePort: 30080, ", List.of(0, 1, 2), List.of())
                + service(
                        lab,
                        "local-np",
                        "10.96.0.12",
                        "type: NodePort, externalTrafficPolicy: Local",
                        "nodePort: 30081, ",
                        List.of(0, 2),
                        List.of())
                + service(lab, "empty", "10.96.0.30", "type: NodePort", "nodePort: 30082, ", List.of(), List.of())
                + service(lab, "solo", "10.96.0.40", "", "", List.of(0), List.of())
                + service(lab, "local-only", "10.96.0.50", "internalTrafficPolicy: Local", "", List.of(2), List.of())
                + loadBalancer(lab, "lb-open", "10.96.0.60", "198.51.100.10", "192.168.50.0/24")
                + loadBalancer(lab, "lb-closed", "10.96.0.61", "198.51.100.11", "203.0.113.0/24")
                + """
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: dns, namespace: shop}
                spec: {clusterIP: 10.96.0.53, ports: [{name: dns, port: 53, protocol: UDP}]}
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: dns-1, namespace: shop, labels: {kubernetes.io/service-name: dns}}
                addressType: IPv4
                ports: [{name: dns, port: 5353, protocol: UDP}]
                endpoints:
                - {addresses: [%s], nodeName: node-a}
                - {addresses: [%s], nodeName: node-a}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: web6, namespace: shop}
                spec:
                  type: NodePort
                  clusterIPs: [10.96.0.70, "fd00:96::70"]
                  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30083}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: web6-v6, namespace: shop, labels: {kubernetes.io/service-name: web6}}
                addressType: IPv6
                ports: [{name: http, port: 8080}]
                endpoints:
                - {addresses: ["%s"], nodeName: node-a}
                - {addresses: ["%s"], nodeName: node-b}
                """.formatted(lab.podIPv4(0), lab.podIPv4(1), lab.podIPv6(0), lab.podIPv6(1));
    }

    private static String service(
            NetnsLab lab,
            String name,
            String clusterIP,
            String specExtra,
            String portExtra,
            List<Integer> ready,
            List<Integer> notReady) {
        String extra = specExtra.isEmpty() ? "" : specExtra + ", ";
        return """
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: %s, namespace: shop}
                spec: {%sclusterIP: %s, ports: [{name: http, port: 80, %stargetPort: 8080}]}
                """.formatted(name, extra, clusterIP, portExtra) + slice(lab, name, ready, notReady);
    }

    private static String loadBalancer(NetnsLab lab, String name, String clusterIP, String vip, String sourceRange) {
        return """
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: %s, namespace: shop}
                spec:
                  type: LoadBalancer
                  clusterIP: %s
                  loadBalancerSourceRanges: [%s]
                  ports: [{name: http, port: 80, targetPort: 8080}]
                status: {loadBalancer: {ingress: [{ip: %s}]}}
                """.formatted(name, clusterIP, sourceRange, vip) + slice(lab, name, List.of(1), List.of());
    }

    /** The Service's EndpointSlice (none when it has no endpoints); pod2 runs on node-b, the rest on node-a. */
    private static String slice(NetnsLab lab, String service, List<Integer> ready, List<Integer> notReady) {
        if (ready.isEmpty() && notReady.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("""
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: %s-1, namespace: shop, labels: {kubernetes.io/service-name: %s}}
                addressType: IPv4
                ports: [{name: http, port: 8080}]
                endpoints:
                """.formatted(service, service));
        for (int i : ready) {
            sb.append("- {addresses: [%s], nodeName: %s}\n".formatted(lab.podIPv4(i), i == 2 ? "node-b" : "node-a"));
        }
        for (int i : notReady) {
            sb.append("- {addresses: [%s], nodeName: node-a, conditions: {ready: false}}\n".formatted(lab.podIPv4(i)));
        }
        return sb.toString();
    }

    /** Responder ids ("pod0") counted over all answers; any non-OK line fails the probe. */
    static Map<String, Long> answers(List<String> lines) {
        assertThat(lines).allSatisfy(l -> assertThat(l).startsWith("OK "));
        return lines.stream()
                .map(l -> l.split(" ")[1])
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    }

    /** The source address the pod saw ("OK pod0 10.244.0.1" gives 10.244.0.1). */
    static String peer(String line) {
        return line.split(" ")[2];
    }
}
