package io.rulesync.watcher.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import io.rulesync.model.manifest.Problem;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ObjectTranslatorTest {
    private static Object accepted(ObjectKind kind, io.fabric8.kubernetes.api.model.HasMetadata o) {
        Decoded d = ObjectTranslator.decode(kind, o);
        assertThat(d).isInstanceOf(Decoded.Accepted.class);
        return ((Decoded.Accepted) d).object();
    }

    @Test
    void aServiceIsDecodedWithTheApiServersDefaults() {
        Service s = (Service) accepted(ObjectKind.SERVICE, MockCluster.service("shop", "web", "10.96.0.80", 80));
        assertThat(s.key()).isEqualTo("shop/web");
        assertThat(s.clusterIPs()).hasToString("[10.96.0.80]");
        assertThat(s.ports()).singleElement().satisfies(p -> {
            assertThat(p.name()).isEqualTo("http");
            assertThat(p.port()).isEqualTo(80);
        });
        assertThat(s.affinityTimeoutSeconds()).isZero();
    }

    @Test
    void aServiceWithoutAClusterIpYetIsFine() {
        Service s = (Service) accepted(ObjectKind.SERVICE, MockCluster.service("shop", "new", null, 80));
        assertThat(s.clusterIPs()).isEmpty();
        assertThat(s.proxied()).isFalse();
    }

    @Test
    void anInvalidObjectIsRejectedWithItsFields() {
        Decoded d = ObjectTranslator.decode(ObjectKind.SERVICE, MockCluster.service("shop", "web", "10.96.0.080", 0));
        assertThat(d).isInstanceOf(Decoded.Rejected.class);
        assertThat(((Decoded.Rejected) d).problems())
                .extracting(Problem::toString)
                .containsExactlyInAnyOrder(
                        "Service shop/web: spec.clusterIPs[0]: '10.96.0.080' is not a valid IP address",
                        "Service shop/web: spec.ports[0].port: 0 is out of range (1-65535)");
    }

    @Test
    void endpointSlicesAndNodes() {
        EndpointSlice s = (EndpointSlice) accepted(
                ObjectKind.ENDPOINT_SLICE, MockCluster.slice("shop", "web-abc", "web", "10.244.0.11", "10.244.0.12"));
        assertThat(s.key()).isEqualTo("shop/web-abc");
        assertThat(s.serviceName()).isEqualTo("web");
        assertThat(s.endpoints()).hasSize(2);
        Node n = (Node) accepted(ObjectKind.NODE, MockCluster.node("node-a", "192.168.0.1"));
        assertThat(n.key()).isEqualTo("node-a");
        assertThat(n.zone()).isEqualTo("z1");
        assertThat(n.addresses()).hasSize(1); // the Hostname entry is not an IP
        // Every label travels: a rollout wave may select nodes by any of them.
        io.fabric8.kubernetes.api.model.Node labelled = MockCluster.node("node-b", "192.168.0.2");
        labelled.getMetadata().getLabels().put("rollout.example.com/wave", "canary");
        assertThat(((Node) accepted(ObjectKind.NODE, labelled)).labels())
                .containsExactly(
                        Map.entry("rollout.example.com/wave", "canary"),
                        Map.entry("topology.kubernetes.io/zone", "z1"));
    }

    @Test
    void aHeartbeatDecodesToAnEqualNode() {
        io.fabric8.kubernetes.api.model.Node before = MockCluster.node("node-a", "192.168.0.1");
        io.fabric8.kubernetes.api.model.Node after = MockCluster.node("node-a", "192.168.0.1");
        after.getStatus()
                .setConditions(List.of(new NodeConditionBuilder()
                        .withType("Ready")
                        .withStatus("True")
                        .withLastHeartbeatTime("2026-01-01T00:05:00Z")
                        .build()));
        after.getMetadata().setResourceVersion("99");
        assertThat(accepted(ObjectKind.NODE, after)).isEqualTo(accepted(ObjectKind.NODE, before));
    }

    @Test
    void theManifestHasKindAndApiVersionAndNoManagedFields() {
        io.fabric8.kubernetes.api.model.Service s = MockCluster.service("shop", "web", null, 80);
        s.setKind(null); // as in the items of a list response
        s.setApiVersion(null);
        s.getMetadata()
                .setManagedFields(List.of(
                        new ManagedFieldsEntryBuilder().withManager("kubectl").build()));
        Map<String, Object> m = ObjectTranslator.manifest(ObjectKind.SERVICE, s);
        assertThat(m).containsEntry("kind", "Service").containsEntry("apiVersion", "v1");
        @SuppressWarnings("unchecked")
        Map<String, Object> meta = (Map<String, Object>) m.get("metadata");
        assertThat(meta).doesNotContainKey("managedFields").containsEntry("name", "web");
        assertThat(ObjectTranslator.manifest(ObjectKind.ENDPOINT_SLICE, MockCluster.slice("a", "b", "c")))
                .containsEntry("apiVersion", "discovery.k8s.io/v1");
    }

    @Test
    void keysAreNamespaceSlashNameOrTheNodeName() {
        assertThat(ObjectTranslator.key(MockCluster.service("shop", "web", null, 80)))
                .isEqualTo("shop/web");
        assertThat(ObjectTranslator.key(MockCluster.node("node-a", "192.168.0.1")))
                .isEqualTo("node-a");
    }

    /**
     * Objects from an API server go through the same decoder: were one to hold an address the API
     * server refuses today (an older server, or one with strict validation off), it is refused with
     * its field, as from a file or the events topic.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(
            delimiter = '|',
            value = {
                "127.0.0.1        | is loopback",
                "169.254.169.254  | is link-local",
                "0.0.0.0          | is unspecified",
                "224.0.0.1        | is link-local multicast",
                "::1              | is loopback",
                "fe80::1          | is link-local",
                "::ffff:127.0.0.1 | is an IPv4-mapped IPv6 address",
                "10.0.0.1         |",
                "2001:db8::1      |",
            })
    void specialAddressesFromAClusterAreRefusedLikeAnyOther(String address, String verdict) {
        io.fabric8.kubernetes.api.model.Service external = MockCluster.service("shop", "web", "10.96.0.80", 80);
        external.getSpec().setExternalIPs(List.of(address));
        io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice slice =
                MockCluster.slice("shop", "web-abc", "web", "10.244.0.11");
        slice.setAddressType(address.contains(":") ? "IPv6" : "IPv4");
        slice.getEndpoints().get(0).setAddresses(List.of(address));
        Decoded s = ObjectTranslator.decode(ObjectKind.SERVICE, external);
        Decoded e = ObjectTranslator.decode(ObjectKind.ENDPOINT_SLICE, slice);
        if (verdict == null) {
            assertThat(s).isInstanceOf(Decoded.Accepted.class);
            assertThat(e).isInstanceOf(Decoded.Accepted.class);
            return;
        }
        assertThat(((Decoded.Rejected) s).problems())
                .extracting(Problem::toString)
                .containsExactly("Service shop/web: spec.externalIPs[0]: " + address + " " + verdict
                        + " (the API server refuses it)");
        assertThat(((Decoded.Rejected) e).problems())
                .extracting(Problem::toString)
                .containsExactly("EndpointSlice shop/web-abc: endpoints[0].addresses[0]: " + address + " " + verdict
                        + " (the API server refuses it)");
    }
}
