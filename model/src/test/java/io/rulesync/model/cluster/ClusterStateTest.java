package io.rulesync.model.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterStateTest {
    private static final NamespacedName WEB = new NamespacedName("shop", "web");
    private static final NamespacedName API = new NamespacedName("shop", "api");

    private static EndpointSlice slice(String name, String service, String ip) {
        return new EndpointSlice(
                new NamespacedName("shop", name),
                service,
                AddressType.IPV4,
                List.of(new EndpointPort("", Protocol.TCP, 80)),
                List.of(Endpoint.ready(IpAddress.parse(ip), "")),
                false);
    }

    private static Service service(NamespacedName name) {
        return new Service(
                name,
                ServiceType.CLUSTER_IP,
                List.of(IpAddress.parse("10.96.0.1")),
                List.of(new ServicePort("", Protocol.TCP, 80, 0)),
                List.of(),
                List.of(),
                List.of(),
                TrafficPolicy.CLUSTER,
                TrafficPolicy.CLUSTER,
                0,
                0,
                false);
    }

    @Test
    void indexesSlicesByTheirServiceLabelAndFollowsRelabelling() {
        ClusterState s = ClusterState.empty()
                .withEndpointSlice(slice("web-b", "web", "10.0.0.2"))
                .withEndpointSlice(slice("web-a", "web", "10.0.0.1"));
        assertThat(s.slicesOf(WEB)).extracting(e -> e.name().name()).containsExactly("web-a", "web-b");

        s = s.withEndpointSlice(slice("web-b", "api", "10.0.0.2"));
        assertThat(s.slicesOf(WEB)).extracting(e -> e.name().name()).containsExactly("web-a");
        assertThat(s.slicesOf(API)).extracting(e -> e.name().name()).containsExactly("web-b");

        s = s.withoutEndpointSlice(new NamespacedName("shop", "web-a"))
                .withoutEndpointSlice(new NamespacedName("shop", "nope"));
        assertThat(s.slicesOf(WEB)).isEmpty();
    }

    @Test
    void theSameObjectsInAnyOrderGiveAnEqualState() {
        List<EndpointSlice> slices = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            slices.add(slice("web-" + i, i % 2 == 0 ? "web" : "api", "10.0.0." + i));
        }
        ClusterState a = ClusterState.of(List.of(service(WEB), service(API)), slices, List.of());
        Collections.shuffle(slices, new Random(7));
        ClusterState b = ClusterState.of(List.of(service(API), service(WEB)), slices, List.of());
        assertThat(b).isEqualTo(a);
        assertThat(b.slicesOf(WEB)).isEqualTo(a.slicesOf(WEB));
        assertThat(b.services()).extracting(Service::name).containsExactly(API, WEB);
    }

    @Test
    void olderStatesAreUntouchedByChanges() {
        ClusterState before = ClusterState.empty().withService(service(WEB));
        ClusterState after = before.withoutService(WEB).withNode(new Node("n1", "", List.of()));
        assertThat(before.service(WEB)).isPresent();
        assertThat(before.nodes()).isEmpty();
        assertThat(after.service(WEB)).isEmpty();
        assertThat(Set.copyOf(after.nodes()).size()).isEqualTo(1);
    }
}
