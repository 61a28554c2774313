package io.rulesync.compiler.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.nftables.NftNames;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * kube-proxy's nftables mode as its own tests write it ({@code pkg/proxy/nftables/proxier_test.go}, the fake proxier's
 * conventions: pod CIDR 10.0.0.0/8, node IP 192.168.0.2, NodePorts on 192.168.0.2/32). Each Service's lines are
 * compared with the upstream transaction's as a set, because kube-proxy writes Services in a Go map's order.
 */
class NftablesCompilerTest {
    private static final ProxySettings SETTINGS = new ProxySettings(
            IpFamily.IPV4,
            List.of(Cidr.parse("10.0.0.0/8")),
            false,
            ProxySettings.markForBit(14),
            false,
            true,
            List.of(Cidr.parse("192.168.0.2/32")),
            false);

    @Test
    void namesAreKubeProxysHashAndBase() {
        ServicePortName p80 = new ServicePortName(new NamespacedName("ns1", "svc1"), "p80", Protocol.TCP);
        assertThat(NftNames.servicePort(p80)).isEqualTo("ULMVA6XW-ns1/svc1/tcp/p80");
        assertThat(NftNames.servicePort(new ServicePortName(new NamespacedName("ns5", "svc5"), "p80", Protocol.TCP)))
                .isEqualTo("HVFWP5L3-ns5/svc5/tcp/p80");
        assertThat(NftNames.endpoint(p80, IpAddress.parse("10.180.0.1"), 80))
                .isEqualTo("5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80");
        assertThat(NftNames.endpoint(p80, IpAddress.parse("fd00:10:180::2:1"), 80))
                .isEqualTo("2CRNCTTE-ns1/svc1/tcp/p80__fd00.10.180..2.1/80");
        // An unnamed port leaves the trailing slash; a name past 240 characters is cut and marked.
        assertThat(NftNames.servicePort(new ServicePortName(new NamespacedName("ns1", "web"), "", Protocol.TCP)))
                .endsWith("-ns1/web/tcp/");
        String cut = NftNames.hashAndTruncate("x".repeat(300));
        assertThat(cut).hasSize(240).endsWith("...");
    }

    private static final String NODE = """
            kind: Node
            metadata: {name: node1}
            status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
            """;

    private static String slice(String ns, String svc, String port, int targetPort, String... ips) {
        StringBuilder eps = new StringBuilder();
        for (String ip : ips) {
            eps.append("- {addresses: [").append(ip).append("], nodeName: node2}\n");
        }
        return "---\nkind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {name: " + svc + "-1, namespace: "
                + ns
                + ", labels: {kubernetes.io/service-name: " + svc + "}}\naddressType: IPv4\nports: [{name: " + port
                + ", port: "
                + targetPort + "}]\nendpoints:\n" + eps;
    }

    private static List<String> compile(String manifests) throws Exception {
        ClusterState state = ClusterManifests.fromDocuments(ManifestReader.parse("upstream.yaml", NODE + manifests));
        return NftablesCompiler.compile(state, "node1", SETTINGS)
                .render()
                .lines()
                .toList();
    }

    /** The lines of the transaction that belong to a Service: those naming its chains or its addresses. */
    private static List<String> linesOf(List<String> all, String... marks) {
        return all.stream()
                .filter(l -> java.util.Arrays.stream(marks).anyMatch(l::contains))
                .sorted()
                .toList();
    }

    private static List<String> sorted(String text) {
        return text.lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty())
                .sorted()
                .toList();
    }

    @Test
    void aClusterIpWithTwoEndpoints() throws Exception {
        List<String> all = compile("""
                ---
                kind: Service
                metadata: {name: web, namespace: ns1}
                spec: {clusterIP: 172.30.0.10, ports: [{name: http, port: 80, targetPort: 8080}]}
                """ + slice("ns1", "web", "http", 8080, "10.180.0.1", "10.180.1.1"));
        String svc = "service-DK7ABAZC-ns1/web/tcp/http";
        String ep1 = "endpoint-Y2ATE5UJ-ns1/web/tcp/http__10.180.0.1/8080";
        String ep2 = "endpoint-KA52NPY7-ns1/web/tcp/http__10.180.1.1/8080";
        assertThat(linesOf(all, "172.30.0.10", "ns1/web")).isEqualTo(sorted("""
                add chain ip kube-proxy %2$s
                flush chain ip kube-proxy %2$s
                add chain ip kube-proxy %3$s
                flush chain ip kube-proxy %3$s
                add chain ip kube-proxy %1$s
                flush chain ip kube-proxy %1$s
                add element ip kube-proxy cluster-ips { 172.30.0.10 }
                add element ip kube-proxy service-ips { 172.30.0.10 . tcp . 80 : goto %1$s }
                add rule ip kube-proxy %1$s ip daddr 172.30.0.10 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
                add rule ip kube-proxy %1$s numgen random mod 2 vmap { 0 : goto %2$s , 1 : goto %3$s }
                add rule ip kube-proxy %2$s ip saddr 10.180.0.1 jump mark-for-masquerade
                add rule ip kube-proxy %2$s meta l4proto tcp dnat to 10.180.0.1:8080
                add rule ip kube-proxy %3$s ip saddr 10.180.1.1 jump mark-for-masquerade
                add rule ip kube-proxy %3$s meta l4proto tcp dnat to 10.180.1.1:8080
                """.formatted(svc, ep1, ep2)));
    }

    @Test
    void aNodePortWithClusterPolicy() throws Exception {
        List<String> all = compile("""
                ---
                kind: Service
                metadata: {name: np, namespace: ns2}
                spec: {type: NodePort, clusterIP: 172.30.0.20, ports: [{name: http, port: 80, nodePort: 30080}]}
                """ + slice("ns2", "np", "http", 80, "10.180.0.2"));
        String svc = "service-3WQCTCIE-ns2/np/tcp/http";
        String ext = "external-3WQCTCIE-ns2/np/tcp/http";
        String ep = "endpoint-7SLNTOFE-ns2/np/tcp/http__10.180.0.2/80";
        assertThat(linesOf(all, "172.30.0.20", "ns2/np", "30080")).isEqualTo(sorted("""
                add chain ip kube-proxy %3$s
                flush chain ip kube-proxy %3$s
                add chain ip kube-proxy %1$s
                flush chain ip kube-proxy %1$s
                add chain ip kube-proxy %2$s
                flush chain ip kube-proxy %2$s
                add element ip kube-proxy cluster-ips { 172.30.0.20 }
                add element ip kube-proxy service-ips { 172.30.0.20 . tcp . 80 : goto %1$s }
                add element ip kube-proxy service-nodeports { tcp . 30080 : goto %2$s }
                add rule ip kube-proxy %1$s ip daddr 172.30.0.20 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
                add rule ip kube-proxy %2$s jump mark-for-masquerade
                add rule ip kube-proxy %2$s goto %1$s
                add rule ip kube-proxy %1$s numgen random mod 1 vmap { 0 : goto %3$s }
                add rule ip kube-proxy %3$s ip saddr 10.180.0.2 jump mark-for-masquerade
                add rule ip kube-proxy %3$s meta l4proto tcp dnat to 10.180.0.2:80
                """.formatted(svc, ext, ep)));
    }

    @Test
    void clientIpAffinityGetsASetPerEndpoint() throws Exception {
        List<String> all = compile("""
                ---
                kind: Service
                metadata: {name: sticky, namespace: ns3}
                spec: {clusterIP: 172.30.0.30, sessionAffinity: ClientIP, ports: [{name: redis, port: 6379}]}
                """ + slice("ns3", "sticky", "redis", 6379, "10.180.0.3", "10.180.1.3"));
        String svc = "service-OSUTWGEX-ns3/sticky/tcp/redis";
        String e1 = "VOT4G4OZ-ns3/sticky/tcp/redis__10.180.0.3/6379";
        String e2 = "2H37KF7Q-ns3/sticky/tcp/redis__10.180.1.3/6379";
        assertThat(linesOf(all, "172.30.0.30", "ns3/sticky")).isEqualTo(sorted("""
                add chain ip kube-proxy endpoint-%2$s
                flush chain ip kube-proxy endpoint-%2$s
                add chain ip kube-proxy endpoint-%3$s
                flush chain ip kube-proxy endpoint-%3$s
                add chain ip kube-proxy %1$s
                flush chain ip kube-proxy %1$s
                add element ip kube-proxy cluster-ips { 172.30.0.30 }
                add element ip kube-proxy service-ips { 172.30.0.30 . tcp . 6379 : goto %1$s }
                add rule ip kube-proxy %1$s ip daddr 172.30.0.30 tcp dport 6379 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
                add set ip kube-proxy affinity-%2$s { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
                add set ip kube-proxy affinity-%3$s { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
                add rule ip kube-proxy %1$s ip saddr @affinity-%2$s goto endpoint-%2$s
                add rule ip kube-proxy %1$s ip saddr @affinity-%3$s goto endpoint-%3$s
                add rule ip kube-proxy %1$s numgen random mod 2 vmap { 0 : goto endpoint-%2$s , 1 : goto endpoint-%3$s }
                add rule ip kube-proxy endpoint-%2$s ip saddr 10.180.0.3 jump mark-for-masquerade
                add rule ip kube-proxy endpoint-%2$s update @affinity-%2$s { ip saddr }
                add rule ip kube-proxy endpoint-%2$s meta l4proto tcp dnat to 10.180.0.3:6379
                add rule ip kube-proxy endpoint-%3$s ip saddr 10.180.1.3 jump mark-for-masquerade
                add rule ip kube-proxy endpoint-%3$s update @affinity-%3$s { ip saddr }
                add rule ip kube-proxy endpoint-%3$s meta l4proto tcp dnat to 10.180.1.3:6379
                """.formatted(svc, e1, e2)));
    }

    @Test
    void aLoadBalancerWithSourceRanges() throws Exception {
        List<String> all = compile("""
                ---
                kind: Service
                metadata: {name: lb, namespace: ns4}
                spec:
                  type: LoadBalancer
                  clusterIP: 172.30.0.40
                  loadBalancerSourceRanges: [203.0.113.0/25]
                  ports: [{name: https, port: 443, nodePort: 30443}]
                status: {loadBalancer: {ingress: [{ip: 5.6.7.8}]}}
                """ + slice("ns4", "lb", "https", 8443, "10.180.0.4"));
        String h = "AX7PDJR4-ns4/lb/tcp/https";
        String ep = "endpoint-36MINGKI-ns4/lb/tcp/https__10.180.0.4/8443";
        assertThat(linesOf(all, "172.30.0.40", "ns4/lb", "5.6.7.8", "30443")).isEqualTo(sorted("""
                add chain ip kube-proxy %2$s
                flush chain ip kube-proxy %2$s
                add chain ip kube-proxy service-%1$s
                flush chain ip kube-proxy service-%1$s
                add chain ip kube-proxy external-%1$s
                flush chain ip kube-proxy external-%1$s
                add element ip kube-proxy cluster-ips { 172.30.0.40 }
                add element ip kube-proxy service-ips { 172.30.0.40 . tcp . 443 : goto service-%1$s }
                add chain ip kube-proxy firewall-%1$s
                flush chain ip kube-proxy firewall-%1$s
                add element ip kube-proxy service-ips { 5.6.7.8 . tcp . 443 : goto external-%1$s }
                add element ip kube-proxy firewall-ips { 5.6.7.8 . tcp . 443 : goto firewall-%1$s }
                add element ip kube-proxy service-nodeports { tcp . 30443 : goto external-%1$s }
                add rule ip kube-proxy service-%1$s ip daddr 172.30.0.40 tcp dport 443 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
                add rule ip kube-proxy external-%1$s jump mark-for-masquerade
                add rule ip kube-proxy external-%1$s goto service-%1$s
                add rule ip kube-proxy firewall-%1$s ip saddr != { 203.0.113.0/25 } drop
                add rule ip kube-proxy service-%1$s numgen random mod 1 vmap { 0 : goto %2$s }
                add rule ip kube-proxy %2$s ip saddr 10.180.0.4 jump mark-for-masquerade
                add rule ip kube-proxy %2$s meta l4proto tcp dnat to 10.180.0.4:8443
                """.formatted(h, ep)));
    }

    @Test
    void withoutEndpointsAClusterIpRejectsAndLocalPolicyWithoutLocalEndpointsDrops() throws Exception {
        List<String> none = compile("""
                ---
                kind: Service
                metadata: {name: svc6, namespace: ns6}
                spec: {clusterIP: 172.30.0.46, ports: [{name: p80, port: 80}]}
                """);
        assertThat(linesOf(none, "172.30.0.46", "ns6/svc6")).isEqualTo(sorted("""
                add element ip kube-proxy cluster-ips { 172.30.0.46 }
                add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
                """));

        // externalTrafficPolicy Local whose only endpoint is on another node: the short-circuits, and drops for
        // outsiders.
        List<String> local = compile("""
                ---
                kind: Service
                metadata: {name: svc2, namespace: ns2}
                spec:
                  type: LoadBalancer
                  clusterIP: 172.30.0.42
                  externalTrafficPolicy: Local
                  externalIPs: [192.168.99.22]
                  ports: [{name: p80, port: 80, nodePort: 3001}]
                status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}
                """ + slice("ns2", "svc2", "p80", 80, "10.180.0.2"));
        String ext = "external-42NFTM6N-ns2/svc2/tcp/p80";
        assertThat(local)
                .contains(
                        "add rule ip kube-proxy " + ext
                                + " ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment \"short-circuit pod traffic\"",
                        "add rule ip kube-proxy " + ext
                                + " fib saddr type local jump mark-for-masquerade comment \"masquerade local traffic\"",
                        "add rule ip kube-proxy " + ext
                                + " fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment \"short-circuit local traffic\"",
                        "add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 : goto " + ext + " }",
                        "add element ip kube-proxy service-ips { 192.168.99.22 . tcp . 80 : goto " + ext + " }",
                        "add element ip kube-proxy service-nodeports { tcp . 3001 : goto " + ext + " }",
                        "add element ip kube-proxy no-endpoint-services { 1.2.3.4 . tcp . 80 comment \"ns2/svc2:p80\" : drop }",
                        "add element ip kube-proxy no-endpoint-services { 192.168.99.22 . tcp . 80 comment \"ns2/svc2:p80\" : drop }",
                        "add element ip kube-proxy no-endpoint-nodeports { tcp . 3001 comment \"ns2/svc2:p80\" : drop }");
        assertThat(local.stream().filter(l -> l.startsWith("add rule ip kube-proxy " + ext + " ")))
                .hasSize(3);
    }

    @Test
    void theBaseChainsAreThoseOfV1336() throws Exception {
        List<String> all = compile("");
        assertThat(all)
                .startsWith("add table ip kube-proxy { comment \"rules for kube-proxy\" ; }")
                .contains(
                        "add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }",
                        "add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }",
                        "add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }",
                        "add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }",
                        "add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }",
                        "add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }",
                        "add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }",
                        "add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }",
                        "add rule ip kube-proxy filter-output ct state new jump cluster-ips-check",
                        "add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check",
                        "add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000",
                        "add element ip kube-proxy nodeport-ips { 192.168.0.2 }")
                .noneMatch(l -> l.contains("filter-output-post-dnat") || l.contains("KUBE-"));
    }
}
