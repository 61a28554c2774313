package io.rulesync.compiler.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.cli.ClusterManifests;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftTransaction;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A partial transaction touches what changed, and nothing else: the operation counts of kube-proxy's own
 * {@code TestSyncProxyRulesRepeated} (one endpoint per Service), where they are the same, and fewer where kube-proxy
 * rewrites chains that did not change.
 */
class NftDeltaTest {
    private static final ProxySettings SETTINGS = new ProxySettings(
            IpFamily.IPV4,
            List.of(Cidr.parse("10.0.0.0/8")),
            false,
            ProxySettings.markForBit(14),
            false,
            true,
            List.of(Cidr.parse("192.168.0.2/32")),
            false);
    private static final String NODE =
            "kind: Node\nmetadata: {name: node1}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.2}]}\n";

    private static String service(String name, String ip) {
        return "---\nkind: Service\nmetadata: {name: " + name + ", namespace: ns}\nspec: {clusterIP: " + ip
                + ", ports: [{name: p80, port: 80}]}\n";
    }

    private static String slice(String name, String... ips) {
        StringBuilder eps = new StringBuilder();
        for (String ip : ips) {
            eps.append("- {addresses: [").append(ip).append("], nodeName: node2}\n");
        }
        return "---\nkind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {name: " + name
                + "-1, namespace: ns, labels: "
                + "{kubernetes.io/service-name: " + name
                + "}}\naddressType: IPv4\nports: [{name: p80, port: 80}]\nendpoints:"
                + (ips.length == 0 ? " []\n" : "\n" + eps);
    }

    private static NftTransaction table(String manifests) throws Exception {
        return NftablesCompiler.compile(
                ClusterManifests.fromDocuments(ManifestReader.parse("t.yaml", NODE + manifests)), "node1", SETTINGS);
    }

    private static final String BASE = service("svc1", "172.30.0.41") + slice("svc1", "10.180.0.1");

    @Test
    void theSameTableNeedsNothing() throws Exception {
        assertThat(NftDelta.between(table(BASE), table(BASE)).isEmpty()).isTrue();
    }

    @Test
    void aServiceWithAnEndpointIsTenOperations() throws Exception {
        NftDelta d = NftDelta.between(
                table(BASE), table(BASE + service("svc2", "172.30.0.42") + slice("svc2", "10.180.0.2")));
        assertThat(d.main().ops()).hasSize(10);
        assertThat(d.cleanup().ops()).isEmpty();
        assertThat(d.main().render())
                .contains("add element ip kube-proxy cluster-ips { 172.30.0.42 }")
                .doesNotContain("svc1");
    }

    @Test
    void anEndpointsNewAddressIsNineOperationsAndTheOldChainGoesAfter() throws Exception {
        NftDelta d = NftDelta.between(table(BASE), table(service("svc1", "172.30.0.41") + slice("svc1", "10.180.0.9")));
        assertThat(d.main().ops()).hasSize(9);
        assertThat(d.cleanup().ops())
                .singleElement()
                .satisfies(op -> assertThat(op.render("ip")).contains("__10.180.0.1/80"));
    }

    @Test
    void aServiceRemovedIsFourOperationsThenItsChainsAreDeleted() throws Exception {
        String two = BASE + service("svc2", "172.30.0.42") + slice("svc2", "10.180.0.2");
        NftDelta d = NftDelta.between(table(two), table(BASE));
        assertThat(d.main().ops()).hasSize(4);
        assertThat(d.cleanup().ops()).hasSize(2);
    }

    @Test
    void endpointsThatGoAwayLeaveTheServiceToRejectInFourOperations() throws Exception {
        NftDelta d = NftDelta.between(table(BASE), table(service("svc1", "172.30.0.41") + slice("svc1")));
        // Two elements and two chains flushed (kube-proxy's test counts five: its Service had two endpoints).
        assertThat(d.main().ops()).hasSize(4);
        assertThat(d.main().render())
                .contains("delete element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 }")
                .contains(
                        "add element ip kube-proxy no-endpoint-services { 172.30.0.41 . tcp . 80 comment \"ns/svc1:p80\" : goto reject-chain }");
    }
}
