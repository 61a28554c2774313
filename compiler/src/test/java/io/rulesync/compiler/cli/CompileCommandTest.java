package io.rulesync.compiler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The compile command's contract: rules on stdout and exit 0, or problems on stderr, exit 2 and no stdout. */
class CompileCommandTest {
    @TempDir
    Path dir;

    private static final String NODE = """
            apiVersion: v1
            kind: Node
            metadata: {name: node-a}
            status: {addresses: [{type: InternalIP, address: 192.168.0.2}, {type: InternalIP, address: "fd00::2"}]}
            """;
    private static final String WEB = """
            apiVersion: v1
            kind: Service
            metadata: {name: web, namespace: shop}
            spec:
              clusterIPs: [10.96.0.10, "fd00:96::10"]
              ports: [{name: http, port: 80}]
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata: {name: web-v4, namespace: shop, labels: {kubernetes.io/service-name: web}}
            addressType: IPv4
            ports: [{name: http, port: 8080}]
            endpoints: [{addresses: [10.244.0.10], nodeName: node-a}]
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata: {name: web-v6, namespace: shop, labels: {kubernetes.io/service-name: web}}
            addressType: IPv6
            ports: [{name: http, port: 8080}]
            endpoints: [{addresses: ["fd00:244::10"], nodeName: node-a}]
            """;

    record Run(int exit, String out, String err) {}

    private Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new CompileCommand());
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int exit = cmd.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void printsBothTablesForTheNode() throws Exception {
        Files.writeString(dir.resolve("node.yaml"), NODE);
        Files.writeString(dir.resolve("web.yaml"), WEB);
        Run r = run("-f", dir.toString(), "--node", "node-a", "--cluster-cidr", "10.244.0.0/16");
        assertThat(r.exit()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out())
                .startsWith("*filter\n")
                .contains("\nCOMMIT\n*nat\n")
                .endsWith("COMMIT\n")
                .contains(
                        "-A KUBE-SERVICES -m comment --comment \"shop/web:http cluster IP\" -m tcp -p tcp -d 10.96.0.10 --dport 80 -j KUBE-SVC-")
                .contains("! -s 10.244.0.0/16 -j KUBE-MARK-MASQ")
                .contains("-j DNAT --to-destination 10.244.0.10:8080");
    }

    @Test
    void ipv6GivesTheIp6tablesRuleSet() throws Exception {
        Files.writeString(dir.resolve("all.yaml"), NODE + "---\n" + WEB);
        Run r = run(
                "-f",
                dir.resolve("all.yaml").toString(),
                "--node",
                "node-a",
                "--ip-family",
                "ipv6",
                "--cluster-cidr",
                "10.244.0.0/16,fd00:244::/64");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains("-d fd00:96::10 --dport 80")
                .contains("! -s fd00:244::/64")
                .contains("--to-destination [fd00:244::10]:8080")
                .contains("-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS")
                .doesNotContain("10.96.0.10")
                .doesNotContain("KUBE-FIREWALL");
    }

    @Test
    void nftablesModePrintsATableForEachFamilyOfADualStackNode() throws Exception {
        Files.writeString(dir.resolve("all.yaml"), NODE + "---\n" + WEB);
        Run r = run(
                "-f",
                dir.resolve("all.yaml").toString(),
                "--node",
                "node-a",
                "--mode",
                "nftables",
                "--cluster-cidr",
                "10.244.0.0/16,fd00:244::/64");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .startsWith("add table ip kube-proxy { comment \"rules for kube-proxy\" ; }\n")
                .contains("\nadd table ip6 kube-proxy { comment \"rules for kube-proxy\" ; }\n")
                .contains("add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto service-")
                .contains("ip daddr 10.96.0.10 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade")
                .contains("meta l4proto tcp dnat to 10.244.0.10:8080")
                .contains("add element ip6 kube-proxy service-ips { fd00:96::10 . tcp . 80 : goto service-")
                .contains("meta l4proto tcp dnat to [fd00:244::10]:8080")
                .doesNotContain("KUBE-");
        // One family when asked for one.
        Run v6 = run(
                "-f",
                dir.resolve("all.yaml").toString(),
                "--node",
                "node-a",
                "--mode",
                "nftables",
                "--ip-family",
                "ipv6");
        assertThat(v6.out()).startsWith("add table ip6 kube-proxy").doesNotContain("add table ip kube-proxy");
        assertThat(run("-f", dir.toString(), "--node", "node-a", "--mode", "ebpf")
                        .err())
                .contains("is not iptables, ipvs or nftables");
    }

    @Test
    void writesToAFileWhenAsked() throws Exception {
        Files.writeString(dir.resolve("all.yaml"), NODE + "---\n" + WEB);
        Path out = dir.resolve("rules.txt");
        Run r = run("-f", dir.resolve("all.yaml").toString(), "--node", "node-a", "-o", out.toString());
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEmpty();
        assertThat(Files.readString(out)).startsWith("*filter\n");
    }

    @Test
    void badInputExitsTwoWithFileObjectAndFieldOnStderrAndNothingOnStdout() throws Exception {
        Files.writeString(dir.resolve("node.yaml"), NODE);
        Files.writeString(dir.resolve("bad.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: shop}
                spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 99999}]}
                """);
        Run r = run("-f", dir.toString(), "--node", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().strip())
                .isEqualTo(dir.resolve("bad.yaml")
                        + " (document 1): Service shop/web: spec.ports[0].port: 99999 is out of range (1-65535)");
    }

    @Test
    void unparsableFilesUnknownNodesAndInjectionAttemptsAreRefused() throws Exception {
        Files.writeString(dir.resolve("node.yaml"), NODE);
        Files.writeString(dir.resolve("garbage.yaml"), "kind: Service\n  metadata: [\n");
        Run r = run("-f", dir.toString(), "--node", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith(dir.resolve("garbage.yaml") + ": not valid YAML or JSON");

        Files.delete(dir.resolve("garbage.yaml"));
        r = run("-f", dir.toString(), "--node", "node-z");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("node 'node-z'").contains("known nodes: node-a");

        Files.writeString(dir.resolve("evil.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: shop}
                spec:
                  clusterIP: 10.96.0.10
                  externalIPs: ["1.2.3.4 -j ACCEPT\\n-A INPUT"]
                  ports: [{name: http, port: 80}]
                """);
        r = run("-f", dir.toString(), "--node", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .contains(
                        "Service shop/web: spec.externalIPs[0]: '1.2.3.4 -j ACCEPT\\x0a-A INPUT' is not a valid IP address");
    }

    @Test
    void theSameObjectTwiceIsAnError() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NODE);
        Files.writeString(dir.resolve("b.yaml"), NODE);
        Run r = run("-f", dir.toString(), "--node", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("Node node-a: is defined twice (first in " + dir.resolve("a.yaml"));
    }

    @Test
    void badOptionsExitTwo() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NODE);
        Run r = run("-f", dir.toString(), "--node", "node-a", "--cluster-cidr", "10.0.0.0/40");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("invalid prefix length");
        assertThat(run("-f", dir.toString(), "--node", "node-a", "--ip-family", "ipv5")
                        .exit())
                .isEqualTo(2);
        assertThat(run("-f", dir.toString()).exit()).isEqualTo(2);
    }

    /**
     * Two Services on one ClusterIP: not bad input but a conflict, resolved as the compiler service
     * resolves it (the first by namespace/name keeps it), said on stderr, whatever the files' order.
     */
    @Test
    void aClusterIpClaimedTwiceLeavesTheLaterServiceOutWithAWarningInAnyFileOrder() throws Exception {
        String api = WEB.replace("name: web", "name: api")
                .replace("service-name: web", "service-name: api")
                .replace("web-v", "api-v")
                .replace("10.244.0.10", "10.244.0.20")
                .replace("fd00:244::10", "fd00:244::20");
        Path first = Files.createDirectory(dir.resolve("first"));
        Files.writeString(first.resolve("a.yaml"), NODE + "---\n" + WEB);
        Files.writeString(first.resolve("b.yaml"), api);
        Path second = Files.createDirectory(dir.resolve("second"));
        Files.writeString(second.resolve("a.yaml"), NODE + "---\n" + api);
        Files.writeString(second.resolve("b.yaml"), WEB);
        Run one = run("-f", first.toString(), "--node", "node-a");
        Run two = run("-f", second.toString(), "--node", "node-a");
        assertThat(one.exit()).isZero();
        assertThat(one.out())
                .isEqualTo(two.out())
                .contains("shop/api:http", "10.244.0.20:8080")
                .doesNotContain("shop/web");
        assertThat(one.err())
                .isEqualTo(two.err())
                .isEqualTo(
                        "warning: Service shop/web: spec.clusterIPs[0]: 10.96.0.10 is also the ClusterIP of Service shop/api"
                                + " (spec.clusterIPs[0]), which sorts first and keeps it; the API server allocates a ClusterIP to one"
                                + " Service only, so this Service is left out of the rules\n"
                                + "warning: Service shop/web: spec.clusterIPs[1]: fd00:96::10 is also the ClusterIP of Service shop/api"
                                + " (spec.clusterIPs[1]), which sorts first and keeps it; the API server allocates a ClusterIP to one"
                                + " Service only, so this Service is left out of the rules\n");
        Run ipvs = run("-f", second.toString(), "--node", "node-a", "--mode", "ipvs");
        assertThat(ipvs.out()).contains("10.244.0.20:8080").doesNotContain("10.244.0.10");
    }

    @Test
    void aSpecialAddressIsBadInput() throws Exception {
        Files.writeString(dir.resolve("all.yaml"), NODE + "---\n" + WEB.replace("10.244.0.10", "169.254.169.254"));
        Run r = run("-f", dir.toString(), "--node", "node-a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .isEqualTo(
                        dir.resolve("all.yaml") + " (document 3): EndpointSlice shop/web-v4: endpoints[0].addresses[0]:"
                                + " 169.254.169.254 is link-local (the API server refuses it)\n");
    }

    @Test
    void aFileOverTheLimitIsRefusedNamingItsSizeAndTheLimitWhichCanBeRaised() throws Exception {
        // About 1.3 MB: a List of 500 Nodes with a 2.5 KB annotation each. Within the default limit
        // (1 GiB), over a limit of 1 MiB.
        StringBuilder nodes = new StringBuilder("kind: List\nitems:\n");
        for (int i = 0; i < 500; i++) {
            nodes.append("- {kind: Node, metadata: {name: node-")
                    .append(i)
                    .append(", annotations: {note: ")
                    .append("n".repeat(2500))
                    .append("}}, status: {addresses: [{type: InternalIP, address: 192.168.")
                    .append(i / 250)
                    .append('.')
                    .append(i % 250 + 1)
                    .append("}]}}\n");
        }
        Path file = Files.writeString(dir.resolve("nodes.yaml"), nodes.toString());
        long size = Files.size(file);
        assertThat(run("-f", file.toString(), "--node", "node-0").exit()).isZero();

        Run r = run("-f", file.toString(), "--node", "node-0", "--max-file-size", "1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines())
                .containsExactly(String.format(
                        java.util.Locale.ROOT,
                        "%s: is %,d bytes (%.1f MiB), over the limit of 1,048,576 bytes (1.0 MiB) per file; split it into several files",
                        file,
                        size,
                        size / 1048576.0));
        assertThat(run("-f", file.toString(), "--node", "node-0", "--max-file-size", "0")
                        .err())
                .contains("--max-file-size: 0 is out of range (1-65536 MiB)");
    }
}
