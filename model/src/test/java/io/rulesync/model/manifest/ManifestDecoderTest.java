package io.rulesync.model.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.EndpointSlice;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Node;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.cluster.ServiceType;
import io.rulesync.model.cluster.TrafficPolicy;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestDecoder.Decoded;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ManifestDecoderTest {

    private static Decoded decodeOne(String yaml) throws ManifestException {
        List<ManifestDocument> docs = ManifestReader.parse("in.yaml", yaml);
        assertThat(docs).hasSize(1);
        return ManifestDecoder.decode(docs.get(0));
    }

    private static List<Problem> problems(String yaml) throws ManifestException {
        Decoded d = decodeOne(yaml);
        assertThat(d).isInstanceOf(Decoded.Rejected.class);
        return ((Decoded.Rejected) d).problems();
    }

    @Test
    void aServiceMayPickItsIpvsSchedulerByAnnotationAndABadOneIsNamed() throws Exception {
        Service s = (Service) ((Decoded.Accepted) decodeOne("""
                kind: Service
                metadata: {name: web, annotations: {rulesync.io/ipvs-scheduler: mh, other: x}}
                spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
                """)).object();
        assertThat(s.ipvsScheduler()).isEqualTo("mh");
        assertThat(((Service) ((Decoded.Accepted) decodeOne("""
                kind: Service
                metadata: {name: web}
                spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
                """)).object()).ipvsScheduler())
                .isNull();
        assertThat(problems("""
                kind: Service
                metadata: {name: web, annotations: {rulesync.io/ipvs-scheduler: "rr -j ACCEPT"}}
                spec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}
                """))
                .singleElement()
                .satisfies(p -> assertThat(p.toString())
                        .contains("metadata.annotations.rulesync.io/ipvs-scheduler")
                        .contains("'rr -j ACCEPT' is not an IPVS scheduler"));
    }

    @Test
    void appliesTheApiServersDefaults() throws Exception {
        Decoded d = decodeOne("""
                kind: Service
                metadata: {name: web}
                spec:
                  clusterIP: 10.96.0.10
                  sessionAffinity: ClientIP
                  ports: [{port: 80}]
                """);
        Service s = (Service) ((Decoded.Accepted) d).object();
        assertThat(s.name().namespace()).isEqualTo("default");
        assertThat(s.type()).isEqualTo(ServiceType.CLUSTER_IP);
        assertThat(s.ports().get(0).protocol()).isEqualTo(Protocol.TCP);
        assertThat(s.ports().get(0).name()).isEmpty();
        assertThat(s.affinityTimeoutSeconds()).isEqualTo(10800);
        assertThat(s.externalTrafficPolicy()).isEqualTo(TrafficPolicy.CLUSTER);
        assertThat(s.clusterIP(IpFamily.IPV4))
                .hasValueSatisfying(ip -> assertThat(ip.toString()).isEqualTo("10.96.0.10"));
    }

    @Test
    void headlessAndExternalNameServicesHaveNoClusterIPs() throws Exception {
        Service headless = (Service) ((Decoded.Accepted) decodeOne("""
                kind: Service
                metadata: {name: db, namespace: shop}
                spec: {clusterIP: None, ports: [{port: 5432}]}
                """)).object();
        Service external = (Service) ((Decoded.Accepted) decodeOne("""
                kind: Service
                metadata: {name: ext, namespace: shop}
                spec: {type: ExternalName, externalName: example.com}
                """)).object();
        assertThat(headless.proxied()).isFalse();
        assertThat(external.proxied()).isFalse();
    }

    @Test
    void namesFileObjectAndFieldOfEveryProblem() throws Exception {
        List<Problem> problems = problems("""
                kind: Service
                metadata: {name: web, namespace: shop}
                spec:
                  clusterIP: 10.96.0.300
                  ports:
                  - {name: http, port: 70000}
                  - {name: http, port: 81, protocol: ICMP}
                """);
        assertThat(problems)
                .extracting(Problem::toString)
                .containsExactlyInAnyOrder(
                        "in.yaml (document 1): Service shop/web: spec.clusterIP: '10.96.0.300' is not a valid IP address",
                        "in.yaml (document 1): Service shop/web: spec.ports[0].port: 70000 is out of range (1-65535)",
                        "in.yaml (document 1): Service shop/web: spec.ports[1].name: duplicate port name 'http'",
                        "in.yaml (document 1): Service shop/web: spec.ports[1].protocol: 'ICMP' is not a protocol (expected TCP, UDP or SCTP)");
    }

    @Test
    void refusesNamesThatWouldInjectIptablesSyntax() throws Exception {
        List<Problem> problems = problems("""
                kind: Service
                metadata: {name: "web\\" -j ACCEPT", namespace: "shop\\n-A INPUT"}
                spec: {clusterIP: 10.96.0.1, ports: [{name: "x -j DROP", port: 80}]}
                """);
        assertThat(problems)
                .extracting(Problem::field)
                .containsExactlyInAnyOrder("metadata.namespace", "metadata.name", "spec.ports[0].name");
        assertThat(problems.get(0).toString()).contains("\\x0a");
    }

    @Test
    void refusesWrongTypes() throws Exception {
        List<Problem> problems = problems("""
                kind: EndpointSlice
                apiVersion: discovery.k8s.io/v1
                metadata: {name: web-1, labels: {kubernetes.io/service-name: web}}
                addressType: IPv4
                ports: [{port: "80"}]
                endpoints:
                - addresses: [10.0.0.1]
                  conditions: {ready: "yes"}
                - addresses: ["fd00::1"]
                - addresses: []
                """);
        assertThat(problems)
                .extracting(p -> p.field() + ": " + p.message())
                .containsExactlyInAnyOrder(
                        "ports[0].port: expected an integer, found the string \"80\"",
                        "endpoints[0].conditions.ready: expected true or false, found the string \"yes\"",
                        "endpoints[1].addresses[0]: fd00::1 is not an IPv4 address",
                        "endpoints[2].addresses: needs at least one address");
    }

    @Test
    void namesTheTypeThatWasFound() throws Exception {
        assertThat(problems("""
                kind: Service
                metadata: {name: 42, namespace: shop}
                spec: {clusterIP: 10.96.0.1, externalIPs: [true], ports: [{port: 80}]}
                """))
                .extracting(p -> p.field() + ": " + p.message())
                .containsExactlyInAnyOrder(
                        "metadata.name: expected a string, found the number 42",
                        "spec.externalIPs[0]: expected a string, found the boolean true");
    }

    @Test
    void endpointSlicesNeedTheServiceNameLabel() throws Exception {
        List<Problem> problems = problems("""
                kind: EndpointSlice
                apiVersion: discovery.k8s.io/v1
                metadata: {name: web-1}
                addressType: IPv4
                """);
        assertThat(problems).singleElement().satisfies(p -> {
            assertThat(p.object()).isEqualTo("EndpointSlice default/web-1");
            assertThat(p.field()).isEqualTo("metadata.labels.kubernetes.io/service-name");
        });
    }

    @Test
    void readsConditionsAsKubeProxyDoes() throws Exception {
        EndpointSlice slice = (EndpointSlice) ((Decoded.Accepted) decodeOne("""
                kind: EndpointSlice
                apiVersion: discovery.k8s.io/v1
                metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                addressType: IPv4
                ports: [{name: http, port: 8080}]
                endpoints:
                - addresses: [10.0.0.1, 10.0.0.9]
                - addresses: [10.0.0.2]
                  conditions: {ready: false, serving: true, terminating: true}
                  nodeName: node-a
                  zone: zone-a
                  hints: {forZones: [{name: zone-a}]}
                """)).object();
        assertThat(slice.service().toString()).isEqualTo("shop/web");
        assertThat(slice.endpoints().get(0).address().toString()).isEqualTo("10.0.0.1");
        assertThat(slice.endpoints().get(0).ready()).isTrue();
        assertThat(slice.endpoints().get(0).serving()).isTrue();
        assertThat(slice.endpoints().get(0).terminating()).isFalse();
        assertThat(slice.endpoints().get(1).ready()).isFalse();
        assertThat(slice.endpoints().get(1).terminating()).isTrue();
        assertThat(slice.endpoints().get(1).zoneHints()).containsExactly("zone-a");
    }

    @Test
    void readsNodeAddressesAndZone() throws Exception {
        Node node = (Node) ((Decoded.Accepted) decodeOne("""
                kind: Node
                metadata: {name: node-a, labels: {topology.kubernetes.io/zone: z1}}
                status:
                  addresses:
                  - {type: Hostname, address: node-a}
                  - {type: ExternalIP, address: 203.0.113.9}
                  - {type: InternalIP, address: 192.168.0.2}
                  - {type: InternalIP, address: "fd00::2"}
                """)).object();
        assertThat(node.zone()).isEqualTo("z1");
        assertThat(node.primaryIP(IpFamily.IPV4))
                .hasValueSatisfying(ip -> assertThat(ip).hasToString("192.168.0.2"));
        assertThat(node.primaryIP(IpFamily.IPV6))
                .hasValueSatisfying(ip -> assertThat(ip).hasToString("fd00::2"));
    }

    @Test
    void keepsEveryNodeLabelSortedAndTellsWhetherTheyMatterToRules() throws Exception {
        Node node = (Node) ((Decoded.Accepted) decodeOne("""
                kind: Node
                metadata: {name: node-a, labels: {pool: gpu, topology.kubernetes.io/zone: z1, kubernetes.io/arch: arm64}}
                status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
                """)).object();
        assertThat(node.labels())
                .containsExactly(
                        Map.entry("kubernetes.io/arch", "arm64"),
                        Map.entry("pool", "gpu"),
                        Map.entry("topology.kubernetes.io/zone", "z1"));
        assertThat(node.zone()).isEqualTo("z1");
        // Only staged rollout reads the other labels: a node that differs in them alone compiles to the same rules.
        Node relabelled =
                Node.labelled("node-a", Map.of("pool", "cpu", "topology.kubernetes.io/zone", "z1"), node.addresses());
        assertThat(relabelled).isNotEqualTo(node);
        assertThat(relabelled.sameForRules(node)).isTrue();
        assertThat(Node.labelled("node-a", Map.of("topology.kubernetes.io/zone", "z2"), node.addresses())
                        .sameForRules(node))
                .isFalse();
        assertThat(problems("""
                kind: Node
                metadata: {name: node-a, labels: {pool: "no spaces"}}
                """))
                .singleElement()
                .satisfies(p -> assertThat(p.field()).isEqualTo("metadata.labels.pool"));
    }

    @Test
    void skipsKindsThatRulesDoNotDependOn() throws Exception {
        assertThat(decodeOne("kind: Deployment\nmetadata: {name: web}\n")).isInstanceOf(Decoded.Skipped.class);
        assertThat(problems("metadata: {name: web}\n"))
                .singleElement()
                .satisfies(p -> assertThat(p.field()).isEqualTo("kind"));
    }
}
