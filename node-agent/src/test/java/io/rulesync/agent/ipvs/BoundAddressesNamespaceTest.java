package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.exec.HostCommand;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testing.needs.RequiresNetns;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BoundAddresses} with the real ip in a namespace of the test's own. kube-ipvs0 is a dummy
 * device; this project's kernels have no dummy driver, so there the adapter must say so, and the
 * address handling is shown on a veth named kube-ipvs0, which holds addresses just the same.
 */
@RequiresNetns
class BoundAddressesNamespaceTest {
    private NetnsLab lab;
    private boolean dummy;

    @BeforeEach
    void lab() {
        lab = new NetnsLab(0);
        dummy = lab.exec(lab.nodeNs(), "ip", "link", "add", "rs-dummy-check", "type", "dummy")
                .ok();
        lab.exec(lab.nodeNs(), "ip", "link", "del", "rs-dummy-check");
    }

    @AfterEach
    void close() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void theDeviceIsCreatedOrTheMissingDriverReported() throws Exception {
        BoundAddresses bound = new BoundAddresses(HostCommand.PROCESSES.inNetns(lab.nodeNs()));
        assertThat(bound.list()).isEmpty();
        if (dummy) {
            assertThat(bound.sync(IpFamily.IPV4, List.of(ip("10.96.0.10"))).add())
                    .containsExactly(ip("10.96.0.10"));
            assertThat(lab.exec(lab.nodeNs(), "ip", "-d", "link", "show", "dev", BoundAddresses.DEVICE)
                            .orThrow()
                            .stdout())
                    .contains("dummy");
            assertThat(bound.list()).containsOnlyKeys(ip("10.96.0.10"));
        } else {
            System.out.println(
                    "BoundAddressesNamespaceTest: this kernel has no dummy driver; checking the error says so");
            assertThatThrownBy(() -> bound.sync(IpFamily.IPV4, List.of(ip("10.96.0.10"))))
                    .isInstanceOf(IpvsApplyException.class)
                    .hasMessage(
                            "cannot create the dummy device kube-ipvs0 (ip link add kube-ipvs0 type dummy: Error: Unknown device type.)"
                                    + ": this kernel has no dummy link driver (module dummy)");
        }
    }

    @Test
    void addsAndRemovesOneFamilysAddresses() throws Exception {
        lab.exec(lab.nodeNs(), "ip", "link", "add", BoundAddresses.DEVICE, "type", "veth", "peer", "name", "kipvs-peer")
                .orThrow();
        // Not rulesync's prefix length: removed by the length the kernel has.
        lab.exec(lab.nodeNs(), "ip", "addr", "add", "10.96.9.1/24", "dev", BoundAddresses.DEVICE)
                .orThrow();
        BoundAddresses bound = new BoundAddresses(HostCommand.PROCESSES.inNetns(lab.nodeNs()));
        BoundAddresses.Diff d = bound.sync(IpFamily.IPV4, List.of(ip("10.96.0.10"), ip("10.96.0.11")));
        assertThat(d.add()).containsExactly(ip("10.96.0.10"), ip("10.96.0.11"));
        assertThat(d.remove()).containsExactly(ip("10.96.9.1"));
        bound.sync(IpFamily.IPV6, List.of(ip("fd00:10:96::20")));
        assertThat(bound.list())
                .isEqualTo(new java.util.TreeMap<>(
                        Map.of(ip("10.96.0.10"), 32, ip("10.96.0.11"), 32, ip("fd00:10:96::20"), 128)));

        d = bound.sync(IpFamily.IPV4, List.of(ip("10.96.0.11"), ip("10.96.0.12")));
        assertThat(d.add()).containsExactly(ip("10.96.0.12"));
        assertThat(d.remove()).containsExactly(ip("10.96.0.10"));
        assertThat(bound.list().keySet()).containsExactly(ip("10.96.0.11"), ip("10.96.0.12"), ip("fd00:10:96::20"));
        assertThat(bound.sync(IpFamily.IPV4, List.of(ip("10.96.0.11"), ip("10.96.0.12")))
                        .isEmpty())
                .isTrue();
        assertThat(bound.sync(IpFamily.IPV6, List.of()).remove()).containsExactly(ip("fd00:10:96::20"));
        assertThat(bound.list().keySet()).containsExactly(ip("10.96.0.11"), ip("10.96.0.12"));

        // A new version, without listing the device: only the difference is written.
        d = bound.update(
                IpFamily.IPV4,
                List.of(ip("10.96.0.11"), ip("10.96.0.12")),
                List.of(ip("10.96.0.12"), ip("10.96.0.13")));
        assertThat(d.add()).containsExactly(ip("10.96.0.13"));
        assertThat(d.remove()).containsExactly(ip("10.96.0.11"));
        assertThat(bound.list().keySet()).containsExactly(ip("10.96.0.12"), ip("10.96.0.13"));
        // What the device does not hold any more (someone removed it) makes the update fail, naming the line.
        lab.exec(lab.nodeNs(), "ip", "addr", "del", "10.96.0.13/32", "dev", BoundAddresses.DEVICE)
                .orThrow();
        assertThatThrownBy(() -> bound.update(
                        IpFamily.IPV4, List.of(ip("10.96.0.12"), ip("10.96.0.13")), List.of(ip("10.96.0.12"))))
                .isInstanceOf(IpvsApplyException.class)
                .hasMessageContaining("addr del 10.96.0.13/32 dev kube-ipvs0");
    }
}
