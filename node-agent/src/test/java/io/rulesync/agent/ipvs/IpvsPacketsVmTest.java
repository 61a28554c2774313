package io.rulesync.agent.ipvs;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.testing.AgentLogs;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testing.needs.RequiresKernelVm;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real packets through what the agent programs in IPVS mode, on the real {@code ip_vs} module of the kernel lab's VM
 * ({@link VmNodeLab}), as the iptables mode is proven on this host. Each test compiles a cluster with the real compiler
 * and lets the agent apply it from nothing.
 */
@RequiresKernelVm
class IpvsPacketsVmTest {
    static KernelVm vm;

    @TempDir
    Path dir;

    private final AgentLogs logs = new AgentLogs();
    private VmNodeLab lab;

    @BeforeAll
    static void boot() {
        vm = KernelVm.boot();
    }

    @AfterAll
    static void powerOff() {
        if (vm != null) {
            vm.close();
        }
    }

    @BeforeEach
    void lab() {
        lab = new VmNodeLab(vm);
    }

    @AfterEach
    void tearDown() {
        logs.close();
        lab.close();
    }

    /** The agent in IPVS mode, refusing to run without it, applied: it must have acked IPVS. */
    private void agent(ClusterRules rules) throws Exception {
        lab.agent(rules, WhenUnavailable.REFUSE, Files.createTempDirectory(dir, "state"));
        assertThat(lab.lastAck())
                .as("%s", lab.lastAck())
                .extracting(NodeAck::status, NodeAck::mode)
                .containsExactly(NodeAck.Status.APPLIED, "ipvs");
    }

    private ClusterRules cluster(String scheduler, String... objects) {
        return lab.cluster(scheduler, objects);
    }

    private List<String> fetch(String ns, String url, int count) {
        return lab.fetch(ns, url, count);
    }

    private static String web(int port) {
        return "kind: Service\nmetadata: {name: web, namespace: shop}\n" + "spec: {clusterIP: " + VmNodeLab.WEB_IP
                + ", ports: [{name: http, port: " + port + "}]}\n";
    }

    @Test
    void roundRobinTakesTheEndpointsInTurn() throws Exception {
        agent(cluster("rr", web(80), Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + VmNodeLab.WEB_IP + "/", 6);
        assertThat(got).containsOnly("pod0", "pod1");
        for (int i = 1; i < got.size(); i++) {
            assertThat(got.get(i)).as("request %d of %s", i, got).isNotEqualTo(got.get(i - 1));
        }
        assertThat(vm.sh("ip netns exec pk-node ipvsadm -Ln -t " + VmNodeLab.WEB_IP + ":80"))
                .contains("rr")
                .contains(VmNodeLab.PODS.get(0) + ":8080")
                .contains(VmNodeLab.PODS.get(1) + ":8080");
    }

    @Test
    void sourceHashingKeepsEachClientOnOneEndpoint() throws Exception {
        agent(cluster(
                "sh",
                web(80),
                Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1), VmNodeLab.PODS.get(2))));
        for (String client : List.of("pk-client1", "pk-client2")) {
            List<String> got = fetch(client, "http://" + VmNodeLab.WEB_IP + "/", 5);
            assertThat(got).as(client).hasSize(5).allMatch(p -> p.startsWith("pod") && p.equals(got.get(0)));
        }
    }

    @Test
    void clientIpAffinityPinsAClientForItsTimeout() throws Exception {
        String sticky = "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                + "spec: {clusterIP: " + VmNodeLab.WEB_IP + ", sessionAffinity: ClientIP,"
                + " sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}, ports: [{name: http, port: 80}]}\n";
        agent(cluster("rr", sticky, Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + VmNodeLab.WEB_IP + "/", 6);
        assertThat(got).hasSize(6).allMatch(p -> p.startsWith("pod") && p.equals(got.get(0)));
        assertThat(vm.sh("ip netns exec pk-node ipvsadm -Ln -t " + VmNodeLab.WEB_IP + ":80"))
                .contains("persistent 60");
    }

    @Test
    void aNodePortReachesTheEndpointsThroughTheNodesAddress() throws Exception {
        String nodePort = "kind: Service\nmetadata: {name: web, namespace: shop}\n"
                + "spec: {type: NodePort, clusterIP: " + VmNodeLab.WEB_IP
                + ", ports: [{name: http, port: 80, nodePort: 30080}]}\n";
        agent(cluster("rr", nodePort, Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1))));
        List<String> got = fetch("pk-client1", "http://" + VmNodeLab.NODE_IP + ":30080/", 4);
        assertThat(got).containsOnly("pod0", "pod1").contains("pod0", "pod1");
        assertThat(vm.sh("ip netns exec pk-node ipset list KUBE-NODE-PORT-TCP")).contains("30080");
    }

    @Test
    void aServiceWithoutEndpointsRefusesConnections() throws Exception {
        agent(cluster("rr", web(80)));
        List<String> got = fetch("pk-client1", "http://" + VmNodeLab.WEB_IP + "/", 2);
        assertThat(got).allMatch(l -> l.contains("refused") || l.equals("FAILED"), "refused");
        assertThat(String.join("\n", got)).contains("refused");
    }

    @Test
    void aPodReachesItselfThroughItsServiceMasqueraded() throws Exception {
        agent(cluster("rr", web(80), Fixtures.slice("web", "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1))));
        // Every other request comes back to pod0 itself (hairpin): it must be answered, which needs the node to
        // masquerade it, or pod0 would answer its own address directly and the connection would not be the one open.
        List<String> got = fetch("pk-pod0", "http://" + VmNodeLab.WEB_IP + "/", 4);
        assertThat(got).containsOnly("pod0", "pod1").contains("pod0");
    }

    /** A Service named {@code name} at {@code ip}, port 80, with its own scheduler (rulesync's annotation). */
    private static String scheduled(String name, String ip, String scheduler) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: shop, annotations: {"
                + "rulesync.io/ipvs-scheduler: " + scheduler + "}}\n"
                + "spec: {clusterIP: " + ip + ", ports: [{name: http, port: 80}]}\n";
    }

    @Test
    void eachSchedulerKubeProxyOffersBalancesAsItSays() throws Exception {
        List<String> objects = new ArrayList<>();
        List<String> schedulers = List.of("wrr", "lc", "dh", "mh");
        for (int i = 0; i < schedulers.size(); i++) {
            String name = "web-" + schedulers.get(i);
            objects.add(scheduled(name, "10.96.0." + (20 + i), schedulers.get(i)));
            objects.add(Fixtures.slice(name, "node-a", VmNodeLab.PODS.get(0), VmNodeLab.PODS.get(1)));
        }
        agent(cluster("rr", objects.toArray(String[]::new)));
        String table = vm.sh("ip netns exec pk-node ipvsadm -Ln");
        for (int i = 0; i < schedulers.size(); i++) {
            assertThat(table).contains("TCP  10.96.0." + (20 + i) + ":80 " + schedulers.get(i));
        }
        // wrr with kube-proxy's equal weights, and lc with connections that end at once: every endpoint in turn.
        for (String ip : List.of("10.96.0.20", "10.96.0.21")) {
            List<String> got = fetch("pk-client1", "http://" + ip + "/", 4);
            assertThat(got).as(ip).containsOnly("pod0", "pod1").contains("pod0", "pod1");
        }
        // dh: by destination, so every client on one endpoint.
        List<String> dh = new ArrayList<>(fetch("pk-client1", "http://10.96.0.22/", 3));
        dh.addAll(fetch("pk-client2", "http://10.96.0.22/", 3));
        assertThat(dh).hasSize(6).allMatch(p -> p.startsWith("pod") && p.equals(dh.get(0)));
        // mh (Maglev) with the flag kube-proxy sets (mh-port): by source address and port, so even one client's
        // connections go to both endpoints (16 connections all on one would be one chance in 30,000).
        assertThat(table).contains("TCP  10.96.0.23:80 mh (mh-port)");
        List<String> mh = new ArrayList<>(fetch("pk-client1", "http://10.96.0.23/", 8));
        mh.addAll(fetch("pk-client2", "http://10.96.0.23/", 8));
        assertThat(mh).hasSize(16).containsOnly("pod0", "pod1").contains("pod0", "pod1");
    }
}
