package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Real packets through what the agent programs in IPVS mode, on the real {@code ip_vs} module of the kernel lab's VM
 * ({@link VmNodeLab}), as the iptables mode is proven on this host. One cluster, compiled by the real compiler, holds a
 * Service for each behaviour; the agent applies it once from nothing, and each test sends its own connections.
 */
@RequiresKernelVm
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IpvsPacketsVmTest {
    private static final String WEB = VmNodeLab.WEB_IP; // round robin, the cluster's scheduler
    private static final String SH = "10.96.0.11";
    private static final String STICKY = "10.96.0.12";
    private static final String NODE_PORT = "10.96.0.13";
    private static final String EMPTY = "10.96.0.14";
    private static final String LOCAL = "10.96.0.15";
    private static final String BRIEF = "10.96.0.17"; // ClientIP affinity for 20 seconds
    private static final List<String> SCHEDULERS = List.of("wrr", "lc", "dh", "mh");

    private KernelVm vm;
    private VmNodeLab lab;
    private String table;

    @BeforeAll
    void node() throws Exception {
        vm = KernelVm.shared();
        lab = new VmNodeLab(vm);
        String pod0 = VmNodeLab.PODS.get(0);
        String pod1 = VmNodeLab.PODS.get(1);
        List<String> objects = new ArrayList<>(List.of(
                service("web", WEB, ""),
                Fixtures.slice("web", "node-a", pod0, pod1),
                service("sh", SH, "annotations: {rulesync.io/ipvs-scheduler: sh}"),
                Fixtures.slice("sh", "node-a", pod0, pod1, VmNodeLab.PODS.get(2)),
                "kind: Service\nmetadata: {name: sticky, namespace: shop}\n"
                        + "spec: {clusterIP: " + STICKY + ", sessionAffinity: ClientIP,"
                        + " sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}, ports: [{name: http, port: 80}]}\n",
                Fixtures.slice("sticky", "node-a", pod0, pod1),
                "kind: Service\nmetadata: {name: brief, namespace: shop}\n"
                        + "spec: {clusterIP: " + BRIEF + ", sessionAffinity: ClientIP,"
                        + " sessionAffinityConfig: {clientIP: {timeoutSeconds: 20}}, ports: [{name: http, port: 80}]}\n",
                Fixtures.slice("brief", "node-a", pod0, pod1),
                "kind: Service\nmetadata: {name: np, namespace: shop}\n"
                        + "spec: {type: NodePort, clusterIP: " + NODE_PORT
                        + ", ports: [{name: http, port: 80, nodePort: 30080}]}\n",
                Fixtures.slice("np", "node-a", pod0, pod1),
                service("empty", EMPTY, ""),
                // externalTrafficPolicy: Local, one endpoint here and one on node-b (pod1 stands in for it).
                Fixtures.node("node-b", "192.168.9.9"),
                "kind: Service\nmetadata: {name: local, namespace: shop}\n"
                        + "spec: {type: NodePort, externalTrafficPolicy: Local, clusterIP: " + LOCAL
                        + ", ports: [{name: http, port: 80, nodePort: 30081}]}\n",
                "kind: EndpointSlice\napiVersion: discovery.k8s.io/v1\nmetadata: {name: local-1, namespace: shop,"
                        + " labels: {kubernetes.io/service-name: local}}\naddressType: IPv4\n"
                        + "ports: [{name: http, port: 8080}]\nendpoints:\n"
                        + "- {addresses: [" + pod0 + "], nodeName: node-a}\n"
                        + "- {addresses: [" + pod1 + "], nodeName: node-b}\n"));
        for (int i = 0; i < SCHEDULERS.size(); i++) {
            String name = "web-" + SCHEDULERS.get(i);
            objects.add(service(
                    name,
                    "10.96.0." + (20 + i),
                    "annotations: {rulesync.io/ipvs-scheduler: " + SCHEDULERS.get(i) + "}"));
            objects.add(Fixtures.slice(name, "node-a", pod0, pod1));
        }
        Path state = Files.createTempDirectory("ipvs-packets");
        lab.agent(lab.cluster("rr", objects.toArray(String[]::new)), WhenUnavailable.REFUSE, state);
        assertThat(lab.lastAck())
                .as("%s", lab.lastAck())
                .extracting(NodeAck::status, NodeAck::mode)
                .containsExactly(NodeAck.Status.APPLIED, "ipvs");
        table = vm.sh("ip netns exec " + VmNodeLab.NODE_NS + " ipvsadm -Ln");
    }

    @AfterAll
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    private static String service(String name, String ip, String metadata) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: shop" + (metadata.isEmpty() ? "" : ", ")
                + metadata + "}\nspec: {clusterIP: " + ip + ", ports: [{name: http, port: 80}]}\n";
    }

    private List<String> fetch(String ns, String url, int count) {
        return lab.fetch(ns, url, count);
    }

    /** Every answer from one of {@code pods}, and all of them from the same one. */
    private static void oneOf(List<String> got, int count, String what) {
        assertThat(got).as(what).hasSize(count).allMatch(p -> p.startsWith("pod") && p.equals(got.get(0)));
    }

    @Test
    void roundRobinTakesTheEndpointsInTurn() {
        List<String> got = fetch("pk-client1", "http://" + WEB + "/", 6);
        assertThat(got).containsOnly("pod0", "pod1");
        for (int i = 1; i < got.size(); i++) {
            assertThat(got.get(i)).as("request %d of %s", i, got).isNotEqualTo(got.get(i - 1));
        }
        assertThat(table).contains("TCP  " + WEB + ":80 rr");
    }

    @Test
    void sourceHashingKeepsEachClientOnOneEndpoint() {
        for (String client : List.of("pk-client1", "pk-client2")) {
            oneOf(fetch(client, "http://" + SH + "/", 5), 5, client);
        }
    }

    @Test
    void clientIpAffinityPinsAClientForItsTimeout() {
        oneOf(fetch("pk-client1", "http://" + STICKY + "/", 6), 6, "pk-client1");
        assertThat(table).contains("TCP  " + STICKY + ":80 rr persistent 60");
    }

    @Test
    void clientIpAffinityEndsWhenItsTimeoutPassesWithoutConnections() {
        String first = lab.hold("pk-client2", BRIEF + ":80", "brief-1");
        assertThat(lab.hold("pk-client2", BRIEF + ":80", "brief-2"))
                .as("pinned while the first is connected")
                .isEqualTo(first);
        // The kernel's persistence template: the client's address without a port, to the pod.
        assertThat(lab.connections(BRIEF)).contains("192.168.2.2:0 ");
        lab.reset("brief-1");
        lab.reset("brief-2");
        // A reset connection is kept ten seconds; the template 20 s from its last connection's start, and the next
        // connection is then scheduled afresh: round robin's next pod. (A template whose time runs out while it still
        // has connections is kept another 60 s, whatever the affinity's timeout: the kernel's rule, not kube-proxy's.)
        await().atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> assertThat(lab.connections(BRIEF)).isBlank());
        assertThat(lab.hold("pk-client2", BRIEF + ":80", "brief-3"))
                .as("after the affinity expired")
                .startsWith("pod")
                .isNotEqualTo(first);
        lab.reset("brief-3");
    }

    @Test
    void podsSeeTheSourceAddressKubeProxyWouldLeaveThem() {
        String bridge = "10.244.0.1"; // the node's address towards its pods
        // From outside the pods' range, to a ClusterIP or a NodePort: masqueraded, so that the answer comes back
        // through this node.
        assertThat(fetch("pk-client1", "http://" + WEB + "/cgi-bin/peer", 2))
                .containsExactlyInAnyOrder("pod0 " + bridge, "pod1 " + bridge);
        assertThat(fetch("pk-client1", "http://" + VmNodeLab.NODE_IP + ":30080/cgi-bin/peer", 2))
                .containsExactlyInAnyOrder("pod0 " + bridge, "pod1 " + bridge);
        // externalTrafficPolicy: Local keeps the client's address (and sends only to this node's endpoint).
        assertThat(fetch("pk-client1", "http://" + VmNodeLab.NODE_IP + ":30081/cgi-bin/peer", 2))
                .containsOnly("pod0 192.168.1.2");
        // From a pod, its own address. Back to itself (hairpin), masqueraded, else it would answer its own address
        // directly and the connection would break: this needs IPVS connections in conntrack, the sysctl the agent sets.
        assertThat(fetch("pk-pod2", "http://" + WEB + "/cgi-bin/peer", 2))
                .containsExactlyInAnyOrder("pod0 10.244.0.12", "pod1 10.244.0.12");
        assertThat(fetch("pk-pod0", "http://" + WEB + "/cgi-bin/peer", 2))
                .containsExactlyInAnyOrder("pod0 " + bridge, "pod1 10.244.0.10");
    }

    @Test
    void aNodePortReachesTheEndpointsThroughTheNodesAddress() {
        List<String> got = fetch("pk-client1", "http://" + VmNodeLab.NODE_IP + ":30080/", 4);
        assertThat(got).containsOnly("pod0", "pod1").contains("pod0", "pod1");
        assertThat(vm.sh("ip netns exec " + VmNodeLab.NODE_NS + " ipset list KUBE-NODE-PORT-TCP"))
                .contains("30080");
    }

    @Test
    void aServiceWithoutEndpointsRefusesConnections() {
        List<String> got = fetch("pk-client1", "http://" + EMPTY + "/", 2);
        assertThat(String.join("\n", got)).contains("refused");
    }

    @Test
    void eachSchedulerKubeProxyOffersBalancesAsItSays() {
        for (int i = 0; i < SCHEDULERS.size(); i++) {
            assertThat(table).contains("TCP  10.96.0." + (20 + i) + ":80 " + SCHEDULERS.get(i));
        }
        // wrr with kube-proxy's equal weights, and lc with connections that end at once: every endpoint in turn.
        for (String ip : List.of("10.96.0.20", "10.96.0.21")) {
            List<String> got = fetch("pk-client1", "http://" + ip + "/", 4);
            assertThat(got).as(ip).containsOnly("pod0", "pod1").contains("pod0", "pod1");
        }
        // dh: by destination, so every client on one endpoint.
        List<String> dh = new ArrayList<>(fetch("pk-client1", "http://10.96.0.22/", 3));
        dh.addAll(fetch("pk-client2", "http://10.96.0.22/", 3));
        oneOf(dh, 6, "dh");
        // mh (Maglev) with the flag kube-proxy sets (mh-port): by source address and port, so even one client's
        // connections go to both endpoints (16 connections all on one would be one chance in 30,000).
        assertThat(table).contains("TCP  10.96.0.23:80 mh (mh-port)");
        List<String> mh = new ArrayList<>(fetch("pk-client1", "http://10.96.0.23/", 8));
        mh.addAll(fetch("pk-client2", "http://10.96.0.23/", 8));
        assertThat(mh).hasSize(16).containsOnly("pod0", "pod1").contains("pod0", "pod1");
    }

    @Test
    void externalTrafficPolicyLocalSendsNodePortTrafficOnlyToThisNodesEndpoints() {
        // Through the node's address: this node's endpoint only.
        assertThat(fetch("pk-client1", "http://" + VmNodeLab.NODE_IP + ":30081/", 6))
                .containsOnly("pod0");
        // Through the ClusterIP: every endpoint, the other node's too.
        assertThat(fetch("pk-client1", "http://" + LOCAL + "/", 4))
                .containsOnly("pod0", "pod1")
                .contains("pod1");
    }
}
