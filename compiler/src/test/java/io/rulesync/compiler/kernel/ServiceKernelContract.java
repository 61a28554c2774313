package io.rulesync.compiler.kernel;

import static io.rulesync.compiler.kernel.KernelTestCluster.answers;
import static io.rulesync.compiler.kernel.KernelTestCluster.peer;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.model.cluster.ClusterState;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What every mode's rules must do to real connections, whatever tool loads them: {@link KernelTestCluster}'s cluster
 * compiled for node-a and loaded into a lab node by the subclass ({@link #load}), then probed from pods, the node and
 * an outside client. Each mode's own behaviour (localhost NodePorts, strict service IPs, counters) is tested in its
 * subclass.
 *
 * <p>Topology (see {@link NetnsLab}): pods 10.244.0.10-15 on a bridge in the node namespace; an outside client at
 * 192.168.50.2 reaches the node at 192.168.50.1. Which pods count as "local" is decided by the EndpointSlices
 * (nodeName), exactly as for kube-proxy.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ServiceKernelContract {
    static final int TIMEOUT_MS = 3000;
    /** Long enough to tell a DROP (no answer) from a REJECT (immediate answer). */
    static final int DROP_WAIT_MS = 700;

    NetnsLab lab;

    /** Loads the mode's rules for node-a, both families, into the lab's node namespace. */
    abstract void load(NetnsLab lab, ClusterState state) throws Exception;

    @BeforeAll
    void buildNodeAndLoadRules() throws Exception {
        lab = new NetnsLab(6);
        for (int pod = 0; pod < 6; pod++) {
            lab.serve(pod, "tcp", 8080, "pod" + pod);
        }
        lab.serve(0, "udp", 5353, "pod0");
        lab.serve(1, "udp", 5353, "pod1");
        load(lab, KernelTestCluster.state(lab));
    }

    @AfterAll
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void clusterIPIsBalancedAcrossExactlyTheReadyEndpoints() {
        // From pod4: 300 new connections. Each ready endpoint expects 100 (sd 8); pod3 is not ready.
        Map<String, Long> seen = answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.10", 80, 300, TIMEOUT_MS));
        assertThat(seen.keySet()).containsExactlyInAnyOrder("pod0", "pod1", "pod2");
        assertThat(seen.values()).allSatisfy(n -> assertThat(n).isBetween(60L, 140L));

        // From the node itself (the output path) as well.
        assertThat(answers(lab.probe(lab.nodeNs(), "tcp", "10.96.0.10", 80, 60, TIMEOUT_MS))
                        .keySet())
                .isSubsetOf("pod0", "pod1", "pod2")
                .hasSizeGreaterThan(1);
    }

    @Test
    void udpClusterIPReachesItsEndpoints() {
        Map<String, Long> seen = answers(lab.probe(lab.podNs(4), "udp", "10.96.0.53", 53, 60, TIMEOUT_MS));
        assertThat(seen.keySet()).containsExactlyInAnyOrder("pod0", "pod1");
    }

    @Test
    void clientIPSessionAffinityHolds() {
        Map<String, Long> fromPod4 = answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.20", 80, 40, TIMEOUT_MS));
        assertThat(fromPod4).hasSize(1);
        Map<String, Long> fromPod5 = answers(lab.probe(lab.podNs(5), "tcp", "10.96.0.20", 80, 40, TIMEOUT_MS));
        assertThat(fromPod5).hasSize(1);
        // The same client keeps its endpoint across separate probe runs too.
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.20", 80, 10, TIMEOUT_MS))
                        .keySet())
                .isEqualTo(fromPod4.keySet());
    }

    @Test
    void nodePortWorksFromTheNodeAndFromAnOutsideClient() {
        List<String> outside = lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30080, 60, TIMEOUT_MS);
        assertThat(answers(outside).keySet()).isSubsetOf("pod0", "pod1", "pod2").hasSizeGreaterThan(1);
        // externalTrafficPolicy Cluster: the endpoint may be on another node, so the source is masqueraded.
        assertThat(outside).allSatisfy(l -> assertThat(peer(l)).isNotEqualTo(lab.clientIPv4()));

        assertThat(answers(lab.probe(lab.nodeNs(), "tcp", lab.nodeIPv4(), 30080, 20, TIMEOUT_MS))
                        .keySet())
                .isSubsetOf("pod0", "pod1", "pod2");
    }

    @Test
    void externalTrafficPolicyLocalKeepsOutsideTrafficOnLocalEndpointsAndTheClientIP() {
        List<String> outside = lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30081, 60, TIMEOUT_MS);
        assertThat(answers(outside).keySet()).containsExactly("pod0");
        assertThat(outside).allSatisfy(l -> assertThat(peer(l)).isEqualTo(lab.clientIPv4()));

        // Its ClusterIP still uses every endpoint.
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "10.96.0.12", 80, 60, TIMEOUT_MS))
                        .keySet())
                .containsExactlyInAnyOrder("pod0", "pod2");
    }

    @Test
    void servicesWithoutEndpointsRefuseAtOnce() {
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.30", 80, 3, TIMEOUT_MS))
                .containsOnly("REFUSED");
        assertThat(lab.probe(lab.nodeNs(), "tcp", "10.96.0.30", 80, 3, TIMEOUT_MS))
                .containsOnly("REFUSED");
        assertThat(lab.probe(lab.clientNs(), "tcp", lab.nodeIPv4(), 30082, 3, TIMEOUT_MS))
                .containsOnly("REFUSED");
    }

    @Test
    void internalTrafficPolicyLocalWithoutLocalEndpointsDrops() {
        // The only endpoint is on node-b: kube-proxy drops (not rejects) ClusterIP traffic on node-a.
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.50", 80, 1, DROP_WAIT_MS))
                .containsOnly("TIMEOUT");
    }

    @Test
    void hairpinTrafficReachesThePodThatSentIt() {
        List<String> lines = lab.probe(lab.podNs(0), "tcp", "10.96.0.40", 80, 5, TIMEOUT_MS);
        assertThat(answers(lines).keySet()).containsExactly("pod0");
        // Masqueraded, or the reply would bypass the node and be dropped.
        assertThat(lines).allSatisfy(l -> assertThat(peer(l)).isNotEqualTo(lab.podIPv4(0)));
    }

    @Test
    void loadBalancerSourceRangesAdmitAndDrop() {
        assertThat(answers(lab.probe(lab.clientNs(), "tcp", "198.51.100.10", 80, 5, TIMEOUT_MS))
                        .keySet())
                .containsExactly("pod1");
        assertThat(lab.probe(lab.clientNs(), "tcp", "198.51.100.11", 80, 1, DROP_WAIT_MS))
                .containsOnly("TIMEOUT");
    }

    @Test
    void ipv6RulesCarryClusterIPAndNodePortTraffic() {
        assertThat(answers(lab.probe(lab.podNs(4), "tcp", "fd00:96::70", 80, 60, TIMEOUT_MS))
                        .keySet())
                .containsExactlyInAnyOrder("pod0", "pod1");
        assertThat(answers(lab.probe(lab.clientNs(), "tcp", lab.nodeIPv6(), 30083, 20, TIMEOUT_MS))
                        .keySet())
                .isSubsetOf("pod0", "pod1");
        // The IPv4 rules know nothing of the IPv6-only slice: no IPv4 endpoints, so REJECT.
        assertThat(lab.probe(lab.podNs(4), "tcp", "10.96.0.70", 80, 1, TIMEOUT_MS))
                .containsOnly("REFUSED");
    }
}
