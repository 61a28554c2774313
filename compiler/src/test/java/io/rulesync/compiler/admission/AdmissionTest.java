package io.rulesync.compiler.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.model.cluster.Service;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.ObjectDeleted;
import io.rulesync.model.event.ObjectKind;
import io.rulesync.model.event.ObjectRef;
import io.rulesync.model.manifest.Problem;
import io.rulesync.testsupport.cluster.Fixtures;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AdmissionTest {
    private static final String C = "shop-cluster";

    /** shop/NAME on CLUSTER_IP port 80, a NodePort Service on NODE_PORT unless it is 0. */
    static Service service(String name, String clusterIP, int nodePort) {
        return (Service) Fixtures.object("kind: Service\nmetadata: {name: " + name + ", namespace: shop}\n"
                + "spec: {type: " + (nodePort == 0 ? "ClusterIP" : "NodePort") + ", clusterIP: " + clusterIP
                + ", ports: [{name: http, port: 80" + (nodePort == 0 ? "" : ", nodePort: " + nodePort) + "}]}\n");
    }

    static ClusterEvent up(String yaml) {
        return Fixtures.upsert(C, yaml);
    }

    static ClusterEvent up(Service s) {
        return new ClusterEvent.ObjectUpserted(C, s, "1", Fixtures.T);
    }

    static ClusterEvent delete(String name) {
        return new ObjectDeleted(C, new ObjectRef(ObjectKind.SERVICE, "shop/" + name), "2", Fixtures.T);
    }

    static final ClusterEvent NODE = up(Fixtures.node("node-a", "192.168.0.2"));

    /** What node-a runs, as iptables-restore input. */
    static String rules(ClusterHead h) {
        return h.published().ruleSet("node-a", IpFamily.IPV4).orElseThrow().render();
    }

    static ClusterHead fold(List<ClusterEvent> events) {
        return ClusterHead.empty(C).apply(events).next();
    }

    @Test
    void twoServicesClaimingOneClusterIpTheFirstByNameKeepsItWhateverCameFirst() throws Exception {
        List<ClusterEvent> events = List.of(
                NODE,
                up(Fixtures.service("web", "10.96.0.10")),
                up(Fixtures.slice("web", "node-a", "10.244.0.10")),
                up(Fixtures.service("api", "10.96.0.10")),
                up(Fixtures.slice("api", "node-a", "10.244.0.20")));
        List<ClusterEvent> reversed = new ArrayList<>(events);
        Collections.reverse(reversed);

        ClusterHead forward = fold(events);
        ClusterHead backward = fold(reversed);
        assertThat(rules(forward)).isEqualTo(rules(backward));
        // shop/api sorts before shop/web: api keeps 10.96.0.10, web is left out as a whole.
        assertThat(rules(forward))
                .contains("shop/api:http cluster IP", "10.244.0.20:8080")
                .doesNotContain("shop/web", "10.244.0.10");
        assertThat(forward.admissionProblems())
                .isEqualTo(backward.admissionProblems())
                .extracting(Problem::toString)
                .containsExactly(
                        "Service shop/web: spec.clusterIPs[0]: 10.96.0.10 is also the ClusterIP of Service shop/api (spec.clusterIPs[0]),"
                                + " which sorts first and keeps it; the API server allocates a ClusterIP to one Service only, so this"
                                + " Service is left out of the rules");
        // What the compile command does with the same state gives the same rules.
        ClusterState state = forward.view().state();
        Admission a = Admission.of(state);
        assertThat(IptablesCompiler.compile(a.admit(state), "node-a", ProxySettings.defaults(IpFamily.IPV4))
                        .render())
                .isEqualTo(rules(forward));
    }

    @Test
    void theLoserComesInWhenTheHolderGoesOrMovesAndGoesOutWhenAnEarlierOneArrives() {
        ClusterHead h = fold(List.of(
                NODE, up(Fixtures.service("web", "10.96.0.10")), up(Fixtures.slice("web", "node-a", "10.244.0.10"))));
        assertThat(rules(h)).contains("shop/web:http");

        // An earlier Service claims web's address: web goes, although web itself did not change.
        ClusterHead.Step arrives = h.apply(List.of(up(Fixtures.service("api", "10.96.0.10"))));
        assertThat(arrives.newVersion()).isTrue();
        assertThat(rules(arrives.next())).doesNotContain("shop/web").contains("shop/api:http has no endpoints");
        assertThat(arrives.next().admissionProblems()).singleElement().satisfies(p -> {
            assertThat(p.object()).isEqualTo("Service shop/web");
            assertThat(p.field()).isEqualTo("spec.clusterIPs[0]");
            assertThat(p.message()).contains("Service shop/api");
        });

        // api moves to another address: web comes back, with its endpoints.
        ClusterHead.Step moves = arrives.next().apply(List.of(up(Fixtures.service("api", "10.96.0.11"))));
        assertThat(rules(moves.next())).contains("shop/web:http", "10.244.0.10:8080");
        assertThat(moves.next().admissionProblems()).isEmpty();

        // And the same after api comes back and is deleted.
        ClusterHead back = moves.next()
                .apply(List.of(up(Fixtures.service("api", "10.96.0.10"))))
                .next();
        ClusterHead.Step gone = back.apply(List.of(delete("api")));
        assertThat(rules(gone.next()))
                .contains("shop/web:http", "10.244.0.10:8080")
                .doesNotContain("shop/api");
        assertThat(gone.next().admissionProblems()).isEmpty();
        // Incremental all along: equal to folding everything at once.
        assertThat(rules(gone.next()))
                .isEqualTo(rules(fold(List.of(
                        NODE,
                        up(Fixtures.service("web", "10.96.0.10")),
                        up(Fixtures.slice("web", "node-a", "10.244.0.10"))))));
    }

    @Test
    void aNodePortIsOneServicesWhateverTheProtocolAndAServiceLeftOutHoldsNothing() {
        // a holds 30001; b wants 30001 and 30002, so it is left out; c wants 30002, which nobody admitted holds.
        Service a = service("a", "10.96.0.1", 30001);
        Service b = (Service) Fixtures.object("""
                kind: Service
                metadata: {name: b, namespace: shop}
                spec:
                  type: NodePort
                  clusterIP: 10.96.0.2
                  ports: [{name: http, port: 80, nodePort: 30002}, {name: dns, port: 53, protocol: UDP, nodePort: 30001}]
                """);
        Service c = (Service) Fixtures.object("""
                kind: Service
                metadata: {name: c, namespace: shop}
                spec:
                  type: LoadBalancer
                  externalTrafficPolicy: Local
                  clusterIP: 10.96.0.3
                  healthCheckNodePort: 30002
                  ports: [{name: http, port: 80, nodePort: 30003}]
                """);
        Admission adm = Admission.of(ClusterState.of(List.of(a, b, c), List.of(), List.of()));
        assertThat(adm.excluded()).extracting(Object::toString).containsExactly("shop/b");
        assertThat(adm.problems())
                .extracting(Problem::toString)
                .containsExactly(
                        "Service shop/b: spec.ports[1].nodePort: 30001 is also the NodePort of Service shop/a (spec.ports[0].nodePort),"
                                + " which sorts first and keeps it; the API server allocates a NodePort to one Service only, so this"
                                + " Service is left out of the rules");

        // Without a, b is in, and c (whose health-check port b now holds) is out.
        Admission.Update u = adm.update(ClusterState.of(List.of(b, c), List.of(), List.of()), List.of(a.name()));
        assertThat(u.next().excluded()).extracting(Object::toString).containsExactly("shop/c");
        assertThat(u.flipped()).extracting(Object::toString).containsExactlyInAnyOrder("shop/b", "shop/c");
        assertThat(u.next().problems()).extracting(Problem::field).containsExactly("spec.healthCheckNodePort");
        assertThat(u.next()).isEqualTo(Admission.of(ClusterState.of(List.of(b, c), List.of(), List.of())));

        // One Service may serve TCP and UDP on one NodePort: that is not a conflict.
        Service both = (Service) Fixtures.object("""
                kind: Service
                metadata: {name: dns, namespace: kube-system}
                spec:
                  type: NodePort
                  clusterIP: 10.96.0.53
                  ports: [{name: dns, port: 53, protocol: UDP, nodePort: 30053}, {name: dns-tcp, port: 53, nodePort: 30053}]
                """);
        assertThat(Admission.of(ClusterState.of(List.of(both), List.of(), List.of()))
                        .problems())
                .isEmpty();
    }

    @Test
    void aSpecialLoadBalancerIpIsLeftOutOfTheRulesAndSaid() {
        ClusterHead h = fold(List.of(NODE, up("""
                kind: Service
                metadata: {name: web, namespace: shop}
                spec: {type: LoadBalancer, clusterIP: 10.96.0.10, ports: [{name: http, port: 80, nodePort: 30080}]}
                status: {loadBalancer: {ingress: [{ip: 169.254.169.254}, {ip: 203.0.113.5}, {ip: 127.0.0.1, ipMode: Proxy}]}}
                """), up(Fixtures.slice("web", "node-a", "10.244.0.10"))));
        assertThat(rules(h)).contains("-d 203.0.113.5 --dport 80").doesNotContain("169.254.169.254");
        assertThat(h.published().ipvs("node-a", IpFamily.IPV4).orElseThrow().render())
                .contains("203.0.113.5")
                .doesNotContain("169.254.169.254");
        assertThat(h.admissionProblems())
                .extracting(Problem::toString)
                .containsExactly(
                        "Service shop/web: status.loadBalancer.ingress: 169.254.169.254 is link-local: the API server accepts it here,"
                                + " but rulesync writes no rule for it (it would capture traffic meant for the node itself)");
    }

    static long[] seeds() {
        return new Random(13L).longs(60).toArray();
    }

    /**
     * Random Services over a few ClusterIPs and NodePorts, added, changed and deleted in random
     * order: after every step the incremental admission is the admission of the state, and a
     * ClusterHead fed the same events in another order publishes the same rules.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void incrementalEqualsFromScratchAndOrderDoesNotMatter(long seed) {
        Random r = new Random(seed);
        List<String> names = List.of("a", "b", "c", "d", "e");
        TreeMap<String, Service> now = new TreeMap<>();
        Admission adm = Admission.EMPTY;
        List<ClusterEvent> events = new ArrayList<>(List.of(NODE));
        for (int step = 0; step < 25; step++) {
            String name = names.get(r.nextInt(names.size()));
            if (r.nextInt(5) == 0) {
                now.remove(name);
                events.add(delete(name));
            } else {
                String ip = "10.96.0." + (1 + r.nextInt(4));
                Service s = service(name, ip, r.nextBoolean() ? 0 : 30000 + r.nextInt(4));
                now.put(name, s);
                events.add(up(s));
            }
            ClusterState state = ClusterState.of(now.values(), List.of(), List.of());
            adm = adm.update(state, Set.of(new NamespacedName("shop", name))).next();
            assertThat(adm).isEqualTo(Admission.of(state));
            assertThat(adm.problems()).isEqualTo(Admission.of(state).problems());
        }
        List<ClusterEvent> shuffled = new ArrayList<>(events.subList(1, events.size()));
        // Only the last event of each Service counts; keep those in random order.
        TreeMap<String, ClusterEvent> last = new TreeMap<>();
        for (ClusterEvent e : shuffled) {
            last.put(
                    e instanceof ObjectDeleted d
                            ? d.ref().key()
                            : ((ClusterEvent.ObjectUpserted) e).ref().key(),
                    e);
        }
        List<ClusterEvent> other = new ArrayList<>(last.values());
        Collections.shuffle(other, r);
        other.add(0, NODE);
        assertThat(rules(fold(other))).isEqualTo(rules(fold(events)));
        assertThat(fold(other).admissionProblems()).isEqualTo(fold(events).admissionProblems());
    }
}
