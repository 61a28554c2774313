package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.DRAIN;
import static io.rulesync.agent.ipvs.IpvsFixtures.T0;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static io.rulesync.agent.ipvs.IpvsFixtures.vs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.plan.ipvs.Draining;
import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.exec.CommandRunner;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link IpvsadmKernel} against a kernel's IPVS table in a namespace of the test's own: plans applied with
 * {@code ipvsadm -R} and read back with {@code ipvsadm -Ln}. The kernel is the subclass's: this host's where it has
 * IPVS ({@link IpvsadmKernelNamespaceTest}), the kernel lab's VM otherwise ({@link IpvsadmKernelVmTest}).
 */
abstract class IpvsadmKernelContract {
    /** A runner in a namespace of the test's own, on a kernel with IPVS. */
    abstract CommandRunner node();

    IpvsadmKernel kernel() {
        return new IpvsadmKernel(node());
    }

    private String listing() throws Exception {
        return node().run(List.of("ipvsadm", "-Ln"), null, Duration.ofSeconds(20))
                .stdout();
    }

    private IpvsPlan sync(IpFamily family, List<VirtualServer> desired, Draining draining) throws Exception {
        IpvsPlan plan = IpvsPlan.plan(family, desired, kernel().list(), draining, T0, DRAIN);
        kernel().run(plan.commands());
        return plan;
    }

    /** The kernel holds exactly {@code desired} of the family: settings, and real servers masquerading at weight 1. */
    private void assertHolds(IpFamily family, List<VirtualServer> desired) throws Exception {
        List<KernelVirtualServer> held = kernel().list().stream()
                .filter(k -> k.service().address().family() == family)
                .toList();
        assertThat(held)
                .extracting(KernelVirtualServer::service)
                .containsExactlyElementsOf(
                        desired.stream().map(ServiceId::of).sorted().toList());
        for (KernelVirtualServer k : held) {
            VirtualServer w = desired.stream()
                    .filter(v -> ServiceId.of(v).equals(k.service()))
                    .findFirst()
                    .orElseThrow();
            assertThat(k.sameSettings(w)).as(k.toString()).isTrue();
            assertThat(k.realServers())
                    .as(k.service().key())
                    .extracting(KernelRealServer::text, KernelRealServer::forward, KernelRealServer::weight)
                    .containsExactlyElementsOf(w.realServers().stream()
                            .map(r -> org.assertj.core.groups.Tuple.tuple(r.text(), "Masq", 1))
                            .toList());
        }
    }

    @Test
    void plansApplyAndReadBackExactly() throws Exception {
        List<VirtualServer> v4 = List.of(
                tcp("10.96.0.10", 53, rs("10.244.1.5", 53), rs("10.244.2.7", 53)),
                vs("10.96.0.10", 53, Protocol.UDP, "rr", 0, rs("10.244.1.5", 53)),
                vs("10.96.0.20", 3868, Protocol.SCTP, "mh", 600, rs("10.244.1.6", 3868)),
                vs("192.168.50.1", 30080, Protocol.TCP, "wlc", 10800, rs("10.244.1.5", 8080)));
        List<VirtualServer> v6 =
                List.of(vs("fd00:10:96::20", 3868, Protocol.TCP, "mh", 600, rs("fd00:10:244::5", 3868)));
        Draining d4 = sync(IpFamily.IPV4, v4, Draining.none()).draining();
        sync(IpFamily.IPV6, v6, Draining.none());
        System.out.println(getClass().getSimpleName() + ": ipvsadm -Ln:\n" + listing());
        assertHolds(IpFamily.IPV4, v4);
        assertHolds(IpFamily.IPV6, v6);
        assertThat(IpvsPlan.plan(IpFamily.IPV4, v4, kernel().list(), d4, T0, DRAIN)
                        .commands())
                .isEmpty();

        // A real server goes (no connections: deleted at once), a scheduler changes, a virtual server goes.
        List<VirtualServer> next = List.of(
                vs("10.96.0.10", 53, Protocol.TCP, "lc", 0, rs("10.244.1.5", 53)),
                vs("10.96.0.20", 3868, Protocol.SCTP, "mh", 600, rs("10.244.1.6", 3868), rs("10.244.1.7", 3868)),
                vs("192.168.50.1", 30080, Protocol.TCP, "wlc", 0, rs("10.244.1.5", 8080)));
        IpvsPlan plan = sync(IpFamily.IPV4, next, d4);
        assertThat(plan.commands())
                .extracting(IpvsCommand::line)
                .containsExactly(
                        "-E -t 10.96.0.10:53 -s lc",
                        "-d -t 10.96.0.10:53 -r 10.244.2.7:53",
                        "-D -u 10.96.0.10:53",
                        "-a --sctp-service 10.96.0.20:3868 -r 10.244.1.7:3868 -m -w 1",
                        "-E -t 192.168.50.1:30080 -s wlc");
        assertHolds(IpFamily.IPV4, next);
        assertHolds(IpFamily.IPV6, v6);
        assertThat(IpvsPlan.plan(IpFamily.IPV4, next, kernel().list(), plan.draining(), T0, DRAIN)
                        .commands())
                .isEmpty();

        // Reading a few virtual servers one by one gives what the full listing gives; an absent one is left out.
        List<ServiceId> some = List.of(ServiceId.of(next.get(0)), ServiceId.of(next.get(1)), ServiceId.of(v4.get(1)));
        assertThat(kernel().list(some))
                .isEqualTo(kernel().list().stream()
                        .filter(k -> some.contains(k.service()))
                        .toList());
        assertThat(kernel().list(some)).hasSize(2);
    }

    @Test
    void refusedCommandsAreNamed() throws Exception {
        kernel().run(List.of(new IpvsCommand.AddService(tcp("10.96.0.10", 80))));
        List<IpvsCommand> commands = new ArrayList<>();
        commands.add(new IpvsCommand.AddReal(ServiceId.of(tcp("10.96.0.10", 80)), rs("10.244.1.5", 80)));
        commands.add(new IpvsCommand.AddReal(ServiceId.of(tcp("10.96.0.99", 80)), rs("10.244.1.5", 80)));
        assertThatThrownBy(() -> kernel().run(commands)).isInstanceOfSatisfying(IpvsApplyException.class, e -> {
            System.out.println(getClass().getSimpleName() + ": " + e.getMessage());
            assertThat(e.failures()).singleElement().satisfies(f -> {
                assertThat(f.command()).isEqualTo("-a -t 10.96.0.99:80 -r 10.244.1.5:80 -m -w 1");
                assertThat(f.reason()).contains("Service not defined");
            });
        });
        // The line before it was applied: ipvsadm -R goes on past refusals, and so does the plan's next run.
        assertThat(kernel().list().get(0).realServers())
                .extracting(KernelRealServer::address)
                .containsExactly(ip("10.244.1.5"));
    }
}
