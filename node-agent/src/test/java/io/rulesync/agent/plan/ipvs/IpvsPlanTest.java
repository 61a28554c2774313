package io.rulesync.agent.plan.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.DRAIN;
import static io.rulesync.agent.ipvs.IpvsFixtures.T0;
import static io.rulesync.agent.ipvs.IpvsFixtures.id;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.lines;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static io.rulesync.agent.ipvs.IpvsFixtures.vs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.ipvs.MemoryIpvs;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Plans as kube-proxy's IPVS proxier syncs: adds, edits and deletes only, with graceful termination. */
class IpvsPlanTest {
    static final ServiceId WEB = id("10.96.0.80", 80, Protocol.TCP);

    private final MemoryIpvs kernel = new MemoryIpvs();
    private Draining draining = Draining.none();

    /** Plans against the memory kernel at {@code now}, applies the plan and keeps its draining state. */
    private IpvsPlan sync(Instant now, VirtualServer... desired) throws Exception {
        IpvsPlan plan = IpvsPlan.plan(IpFamily.IPV4, List.of(desired), kernel.list(), draining, now, DRAIN);
        kernel.run(plan.commands());
        draining = plan.draining();
        return plan;
    }

    private IpvsPlan planOnly(Instant now, VirtualServer... desired) throws Exception {
        return IpvsPlan.plan(IpFamily.IPV4, List.of(desired), kernel.list(), draining, now, DRAIN);
    }

    @Test
    void addsMissingVirtualServersWithTheirRealServersInOrder() throws Exception {
        VirtualServer web = tcp("10.96.0.80", 80, rs("10.244.2.9", 8080), rs("10.244.1.5", 8080));
        VirtualServer dnsUdp = vs("10.96.0.10", 53, Protocol.UDP, "rr", 0, rs("10.244.1.5", 53));
        VirtualServer diameter = vs("10.96.0.10", 3868, Protocol.SCTP, "mh", 600, rs("10.244.1.6", 3868));
        IpvsPlan plan = sync(T0, web, diameter, dnsUdp);
        assertThat(lines(plan))
                .containsExactly(
                        "-A -u 10.96.0.10:53 -s rr",
                        "-a -u 10.96.0.10:53 -r 10.244.1.5:53 -m -w 1",
                        "-A --sctp-service 10.96.0.10:3868 -s mh -p 600 -b mh-port",
                        "-a --sctp-service 10.96.0.10:3868 -r 10.244.1.6:3868 -m -w 1",
                        "-A -t 10.96.0.80:80 -s rr",
                        "-a -t 10.96.0.80:80 -r 10.244.1.5:8080 -m -w 1",
                        "-a -t 10.96.0.80:80 -r 10.244.2.9:8080 -m -w 1");
        assertThat(plan.draining().isEmpty()).isTrue();
        assertThat(planOnly(T0, web, diameter, dnsUdp).commands())
                .as("idempotent")
                .isEmpty();
    }

    @Test
    void theOrderDoesNotDependOnTheInputOrder() throws Exception {
        List<VirtualServer> desired = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            desired.add(tcp("10.96.0." + i, 80, rs("10.244.1." + (7 - i), 80), rs("10.244.1." + i, 80)));
            desired.add(vs("10.96.0." + i, 80, Protocol.UDP, "rr", 0, rs("10.244.1." + i, 80)));
        }
        List<String> first = lines(IpvsPlan.plan(IpFamily.IPV4, desired, List.of(), Draining.none(), T0, DRAIN));
        Collections.shuffle(desired, new java.util.Random(7));
        assertThat(lines(IpvsPlan.plan(IpFamily.IPV4, desired, List.of(), Draining.none(), T0, DRAIN)))
                .isEqualTo(first);
    }

    @Test
    void editsSchedulerPersistenceAndFlagsButNotTheRealServers() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)));
        assertThat(lines(sync(T0, vs("10.96.0.80", 80, Protocol.TCP, "rr", 10800, rs("10.244.1.5", 8080)))))
                .containsExactly("-E -t 10.96.0.80:80 -s rr -p 10800");
        assertThat(lines(sync(T0, vs("10.96.0.80", 80, Protocol.TCP, "mh", 10800, rs("10.244.1.5", 8080)))))
                .containsExactly("-E -t 10.96.0.80:80 -s mh -p 10800 -b mh-port");
        assertThat(lines(sync(T0, vs("10.96.0.80", 80, Protocol.TCP, "wrr", 0, rs("10.244.1.5", 8080)))))
                .containsExactly("-E -t 10.96.0.80:80 -s wrr");
        assertThat(kernel.list()).singleElement().satisfies(k -> {
            assertThat(k.scheduler()).isEqualTo("wrr");
            assertThat(k.flags()).isEmpty();
        });
    }

    @Test
    void editsFlagsTheKernelHasAndTheDesiredServerLacks() {
        KernelVirtualServer listed =
                new KernelVirtualServer(WEB, "rr", 0, new java.util.TreeSet<>(List.of("ops")), List.of());
        assertThat(lines(IpvsPlan.plan(
                        IpFamily.IPV4, List.of(tcp("10.96.0.80", 80)), List.of(listed), Draining.none(), T0, DRAIN)))
                .containsExactly("-E -t 10.96.0.80:80 -s rr");
    }

    @Test
    void deletesStaleVirtualServersAtOnceAndLeavesTheOtherFamilyAlone() throws Exception {
        kernel.run(List.of(
                new IpvsCommand.AddService(tcp("fd00:10:96::80", 80)),
                new IpvsCommand.AddReal(id("fd00:10:96::80", 80, Protocol.TCP), rs("fd00:10:244::5", 80))));
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)), tcp("10.96.0.81", 80, rs("10.244.1.5", 8080)));
        kernel.setConnections(WEB, ip("10.244.1.5"), 8080, 10, 10);
        IpvsPlan plan = sync(T0, tcp("10.96.0.81", 80, rs("10.244.1.5", 8080)));
        assertThat(lines(plan)).containsExactly("-D -t 10.96.0.80:80");
        assertThat(plan.draining().isEmpty()).isTrue();
        assertThat(kernel.serviceIds())
                .containsExactly(id("10.96.0.81", 80, Protocol.TCP), id("fd00:10:96::80", 80, Protocol.TCP));
    }

    @Test
    void addsMissingRealServersAndFixesWrongWeights() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)));
        kernel.run(List.of(
                new IpvsCommand.EditReal(WEB, new io.rulesync.model.ipvs.RealServer(ip("10.244.1.5"), 8080, 5))));
        assertThat(lines(sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080), rs("10.244.1.6", 8080)))))
                .containsExactly(
                        "-e -t 10.96.0.80:80 -r 10.244.1.5:8080 -m -w 1",
                        "-a -t 10.96.0.80:80 -r 10.244.1.6:8080 -m -w 1");
    }

    @Test
    void aTcpRealServerWithConnectionsDrainsUntilTheyEnd() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080), rs("10.244.1.6", 8080)));
        kernel.setConnections(WEB, ip("10.244.1.6"), 8080, 1, 4);
        IpvsPlan plan = sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)));
        assertThat(lines(plan)).containsExactly("-e -t 10.96.0.80:80 -r 10.244.1.6:8080 -m -w 0");
        assertThat(plan.draining().deadlines())
                .isEqualTo(Map.of(new Draining.Server(WEB, ip("10.244.1.6"), 8080), T0.plus(DRAIN)));

        // Still serving its connections a minute later: nothing to do, same deadline.
        plan = sync(T0.plusSeconds(60), tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)));
        assertThat(plan.commands()).isEmpty();
        assertThat(plan.draining().deadline(WEB, ip("10.244.1.6"), 8080)).contains(T0.plus(DRAIN));

        kernel.setConnections(WEB, ip("10.244.1.6"), 8080, 0, 0);
        plan = sync(T0.plusSeconds(120), tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)));
        assertThat(lines(plan)).containsExactly("-d -t 10.96.0.80:80 -r 10.244.1.6:8080");
        assertThat(plan.draining().isEmpty()).isTrue();
        assertThat(planOnly(T0.plusSeconds(120), tcp("10.96.0.80", 80, rs("10.244.1.5", 8080)))
                        .commands())
                .isEmpty();
    }

    @Test
    void aTcpRealServerIsDeletedWhenItsDeadlinePasses() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.6", 8080)));
        kernel.setConnections(WEB, ip("10.244.1.6"), 8080, 3, 0);
        sync(T0, tcp("10.96.0.80", 80));
        assertThat(sync(T0.plus(DRAIN).minusMillis(1), tcp("10.96.0.80", 80)).commands())
                .isEmpty();
        IpvsPlan plan = sync(T0.plus(DRAIN), tcp("10.96.0.80", 80));
        assertThat(lines(plan)).containsExactly("-d -t 10.96.0.80:80 -r 10.244.1.6:8080");
        assertThat(plan.draining().isEmpty()).isTrue();
        assertThat(kernel.list().get(0).realServers()).isEmpty();
    }

    @Test
    void aTcpRealServerWithoutConnectionsIsDeletedAtOnce() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.6", 8080)));
        IpvsPlan plan = sync(T0, tcp("10.96.0.80", 80));
        assertThat(lines(plan)).containsExactly("-d -t 10.96.0.80:80 -r 10.244.1.6:8080");
        assertThat(plan.draining().isEmpty()).isTrue();
    }

    @Test
    void udpAndSctpRealServersAreDeletedAtOnceEvenWithConnections() throws Exception {
        VirtualServer udp = vs("10.96.0.10", 53, Protocol.UDP, "rr", 0, rs("10.244.1.5", 53));
        VirtualServer sctp = vs("10.96.0.10", 3868, Protocol.SCTP, "rr", 0, rs("10.244.1.5", 3868));
        sync(T0, udp, sctp);
        kernel.setConnections(id("10.96.0.10", 53, Protocol.UDP), ip("10.244.1.5"), 53, 0, 9);
        kernel.setConnections(id("10.96.0.10", 3868, Protocol.SCTP), ip("10.244.1.5"), 3868, 4, 0);
        IpvsPlan plan =
                sync(T0, vs("10.96.0.10", 53, Protocol.UDP, "rr", 0), vs("10.96.0.10", 3868, Protocol.SCTP, "rr", 0));
        assertThat(lines(plan))
                .containsExactly(
                        "-d -u 10.96.0.10:53 -r 10.244.1.5:53", "-d --sctp-service 10.96.0.10:3868 -r 10.244.1.5:3868");
        assertThat(plan.draining().isEmpty()).isTrue();
    }

    @Test
    void aDrainingRealServerThatComesBackGetsItsWeightBack() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.6", 8080)));
        kernel.setConnections(WEB, ip("10.244.1.6"), 8080, 2, 0);
        assertThat(sync(T0, tcp("10.96.0.80", 80)).draining().size()).isEqualTo(1);
        IpvsPlan plan = sync(T0.plusSeconds(30), tcp("10.96.0.80", 80, rs("10.244.1.6", 8080)));
        assertThat(lines(plan)).containsExactly("-e -t 10.96.0.80:80 -r 10.244.1.6:8080 -m -w 1");
        assertThat(plan.draining().isEmpty()).isTrue();
        // Its connections were never cut.
        assertThat(kernel.list().get(0).realServers())
                .singleElement()
                .satisfies(r -> assertThat(r.weight()).isEqualTo(1))
                .satisfies(r -> assertThat(r.connections()).isEqualTo(2));
    }

    @Test
    void aForgottenDrainStartsAgainWithoutCommands() throws Exception {
        sync(T0, tcp("10.96.0.80", 80, rs("10.244.1.6", 8080)));
        kernel.setConnections(WEB, ip("10.244.1.6"), 8080, 2, 0);
        sync(T0, tcp("10.96.0.80", 80));
        draining = Draining.none(); // the agent restarted and lost it
        Instant later = T0.plus(Duration.ofHours(1));
        IpvsPlan plan = sync(later, tcp("10.96.0.80", 80));
        assertThat(plan.commands()).isEmpty();
        assertThat(plan.draining().deadline(WEB, ip("10.244.1.6"), 8080)).contains(later.plus(DRAIN));
    }

    @Test
    void anotherForwardingMethodIsEditedButLocalIsLeft() {
        // Old kernels list a real server at a node address as Local, however it was added.
        KernelVirtualServer listed = new KernelVirtualServer(
                WEB,
                "rr",
                0,
                new java.util.TreeSet<>(),
                List.of(
                        new KernelRealServer(ip("10.244.1.5"), 8080, "Route", 1, 0, 0),
                        new KernelRealServer(ip("192.168.50.1"), 8080, "Local", 1, 0, 0)));
        assertThat(lines(IpvsPlan.plan(
                        IpFamily.IPV4,
                        List.of(tcp("10.96.0.80", 80, rs("10.244.1.5", 8080), rs("192.168.50.1", 8080))),
                        List.of(listed),
                        Draining.none(),
                        T0,
                        DRAIN)))
                .containsExactly("-e -t 10.96.0.80:80 -r 10.244.1.5:8080 -m -w 1");
    }

    @Test
    void refusesADesiredStateItCannotPlan() {
        assertThatThrownBy(() -> IpvsPlan.plan(
                        IpFamily.IPV4, List.of(tcp("fd00::1", 80)), List.of(), Draining.none(), T0, DRAIN))
                .hasMessageContaining("is not IPV4");
        assertThatThrownBy(() -> IpvsPlan.plan(
                        IpFamily.IPV4,
                        List.of(tcp("10.0.0.1", 80), vs("10.0.0.1", 80, Protocol.TCP, "lc", 0)),
                        List.of(),
                        Draining.none(),
                        T0,
                        DRAIN))
                .hasMessageContaining("desired twice");
    }
}
