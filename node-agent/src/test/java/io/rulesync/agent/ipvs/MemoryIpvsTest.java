package io.rulesync.agent.ipvs;

import static io.rulesync.agent.ipvs.IpvsFixtures.id;
import static io.rulesync.agent.ipvs.IpvsFixtures.ip;
import static io.rulesync.agent.ipvs.IpvsFixtures.rs;
import static io.rulesync.agent.ipvs.IpvsFixtures.tcp;
import static io.rulesync.agent.ipvs.IpvsFixtures.vs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.KernelRealServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.model.cluster.Protocol;
import io.rulesync.model.ipvs.RealServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory table refuses what ipvsadm refuses, with its messages, and goes on like ipvsadm -R. */
class MemoryIpvsTest {
    static final ServiceId DNS = id("10.96.0.10", 53, Protocol.TCP);

    @Test
    void appliesAndLists() throws Exception {
        MemoryIpvs k = new MemoryIpvs();
        k.run(List.of(
                new IpvsCommand.AddService(vs("10.96.0.10", 53, Protocol.TCP, "mh", 300)),
                new IpvsCommand.AddReal(DNS, rs("10.244.1.5", 53)),
                new IpvsCommand.AddReal(DNS, rs("10.244.1.6", 53)),
                new IpvsCommand.EditReal(DNS, new RealServer(ip("10.244.1.6"), 53, 0))));
        k.setConnections(DNS, ip("10.244.1.6"), 53, 2, 3);
        assertThat(k.list()).singleElement().satisfies(v -> {
            assertThat(v.scheduler()).isEqualTo("mh");
            assertThat(v.persistenceSeconds()).isEqualTo(300);
            assertThat(v.flags()).containsExactly("mh-port");
            assertThat(v.realServers())
                    .containsExactly(
                            new KernelRealServer(ip("10.244.1.5"), 53, "Masq", 1, 0, 0),
                            new KernelRealServer(ip("10.244.1.6"), 53, "Masq", 0, 2, 3));
        });
        // An edit keeps the connections; deleting the service takes its real servers along.
        k.run(List.of(new IpvsCommand.EditReal(DNS, rs("10.244.1.6", 53))));
        assertThat(k.list().get(0).realServers().get(1).connections()).isEqualTo(5);
        k.run(List.of(new IpvsCommand.DeleteService(DNS), new IpvsCommand.AddService(tcp("10.96.0.10", 53))));
        assertThat(k.list())
                .singleElement()
                .satisfies(v -> assertThat(v.realServers()).isEmpty());
        assertThat(k.applied()).startsWith("-A -t 10.96.0.10:53 -s mh -p 300 -b mh-port");
    }

    @Test
    void refusesWhatIpvsadmRefusesAndGoesOn() throws Exception {
        MemoryIpvs k = new MemoryIpvs();
        k.run(List.of(
                new IpvsCommand.AddService(tcp("10.96.0.10", 53)), new IpvsCommand.AddReal(DNS, rs("10.244.1.5", 53))));
        ServiceId missing = id("10.96.0.99", 80, Protocol.TCP);
        List<IpvsCommand> bad = List.of(
                new IpvsCommand.AddService(tcp("10.96.0.10", 53)),
                new IpvsCommand.EditService(tcp("10.96.0.99", 80)),
                new IpvsCommand.DeleteService(missing),
                new IpvsCommand.AddReal(missing, rs("10.244.1.5", 80)),
                new IpvsCommand.AddReal(DNS, rs("10.244.1.5", 53)),
                new IpvsCommand.EditReal(DNS, rs("10.244.1.9", 53)),
                new IpvsCommand.DeleteReal(DNS, ip("10.244.1.9"), 53),
                new IpvsCommand.AddService(vs("10.96.0.11", 53, Protocol.TCP, "nope", 0)),
                new IpvsCommand.AddReal(DNS, rs("fd00::1", 53)),
                new IpvsCommand.AddReal(DNS, rs("10.244.1.7", 53)));
        assertThatThrownBy(() -> k.run(bad)).isInstanceOfSatisfying(IpvsApplyException.class, e -> {
            assertThat(e.failures())
                    .extracting(IpvsApplyException.Failure::reason)
                    .containsExactly(
                            "Service already exists",
                            "No such service",
                            "No such service",
                            "Service not defined",
                            "Destination already exists",
                            "No such destination",
                            "No such destination",
                            "Scheduler or persistence engine not found",
                            "Operation not supported with specified address family");
            assertThat(e.failures().get(0).command()).isEqualTo("-A -t 10.96.0.10:53 -s rr");
            assertThat(e.getMessage())
                    .isEqualTo("ipvsadm -R -A -t 10.96.0.10:53 -s rr: Service already exists (and 8 more refused)");
        });
        // The last line was fine and, as with ipvsadm -R, applied.
        assertThat(k.list().get(0).realServers())
                .extracting(KernelRealServer::text)
                .containsExactly("10.244.1.5:53", "10.244.1.7:53");
    }

    @Test
    void connectionsOnlyOfRealServersThatExist() {
        assertThatThrownBy(() -> new MemoryIpvs().setConnections(DNS, ip("10.244.1.5"), 53, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("10.96.0.10:53/TCP -> 10.244.1.5:53");
    }
}
